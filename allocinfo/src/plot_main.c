// SPDX-License-Identifier: GPL-2.0
/*
 * allocinfo-plot: the plot command as a program of its own, the only
 * one linked with cairo (and through it fontconfig, freetype, X11...).
 * 'allocinfo plot ARGS' runs 'allocinfo-plot ARGS'.
 */
#include <stdlib.h>

#include "allocinfo.h"
#include "cli.h"

int main(int argc, char **argv)
{
	ai_cmd = "plot";
	return cmd_plot(argc, argv);
}
