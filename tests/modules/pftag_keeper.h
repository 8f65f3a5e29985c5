/* SPDX-License-Identifier: GPL-2.0 */
#ifndef PFTAG_KEEPER_H
#define PFTAG_KEEPER_H

struct page;

/* Keep @page (of 1 << @order pages) until pftag_keeper frees it. */
bool pftag_keeper_store(struct page *page, unsigned int order);

#endif /* PFTAG_KEEPER_H */
