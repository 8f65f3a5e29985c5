#!/usr/bin/env python3
"""qmp-relay.py SOCKET LOG PID: relay a guest's monitor requests to QEMU.

scripts/boot.sh -H runs it beside a guest. It follows LOG, the guest's
output, and sends every line that starts with "#QMP " (the rest of the
line is one QMP command, as JSON) to QEMU's QMP socket SOCKET, in order.
Each command, its reply and QEMU's events are written to stdout (boot.sh
keeps them in qmp.log). It stops when process PID (QEMU) is gone.
A line that is not JSON is reported and skipped; a reply with "error"
is reported too, and the guest, which cannot read replies, sees the
effect it waits for not happen. Lines that report a problem start with
"error:".
"""
import json
import os
import socket
import sys
import time


def alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    return True


def connect(path, pid):
    while alive(pid):
        try:
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.connect(path)
            return s
        except (FileNotFoundError, ConnectionRefusedError):
            s.close()
            time.sleep(0.1)
    return None


class Qmp:
    def __init__(self, sock):
        self.sock = sock
        self.buf = b""

    def message(self):
        while b"\n" not in self.buf:
            data = self.sock.recv(65536)
            if not data:
                raise EOFError("QEMU closed the QMP socket")
            self.buf += data
        line, self.buf = self.buf.split(b"\n", 1)
        return json.loads(line)

    def command(self, cmd):
        self.sock.sendall(json.dumps(cmd).encode() + b"\n")
        while True:
            msg = self.message()
            if "event" in msg:
                print("event:", json.dumps(msg), flush=True)
                continue
            return msg


def main():
    if len(sys.argv) != 4:
        sys.exit("usage: qmp-relay.py SOCKET LOG PID")
    path, log, pid = sys.argv[1], sys.argv[2], int(sys.argv[3])
    sock = connect(path, pid)
    if sock is None:
        return 0
    qmp = Qmp(sock)
    print("greeting:", json.dumps(qmp.message()), flush=True)
    print("reply:", json.dumps(qmp.command({"execute": "qmp_capabilities"})), flush=True)
    pos = 0
    pending = b""
    while True:
        running = alive(pid)
        try:
            with open(log, "rb") as f:
                f.seek(pos)
                data = f.read()
                pos += len(data)
        except FileNotFoundError:
            data = b""
        pending += data
        *lines, pending = pending.split(b"\n")
        for raw in lines:
            line = raw.decode(errors="replace").strip("\r")
            if not line.startswith("#QMP "):
                continue
            try:
                cmd = json.loads(line[5:])
            except ValueError as e:
                print(f"error: not JSON ({e}): {line}", flush=True)
                continue
            print("command:", json.dumps(cmd), flush=True)
            try:
                reply = qmp.command(cmd)
            except (EOFError, OSError) as e:
                # The guest's last command (a clean-up) can race with
                # its power-off: not an error if QEMU is on its way out.
                for _ in range(50):
                    if not alive(pid):
                        print(f"note: QEMU exited before it answered ({e})", flush=True)
                        return 0
                    time.sleep(0.1)
                print(f"error: {e}", flush=True)
                return 0
            print("reply:", json.dumps(reply), flush=True)
            if "error" in reply:
                print("error: QEMU refused the command", flush=True)
        if not running:
            return 0
        time.sleep(0.1)


if __name__ == "__main__":
    sys.exit(main())
