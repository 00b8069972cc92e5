/* SPDX-License-Identifier: MIT */
/* libsluice.so is built with hidden visibility; only what is marked SLUICE_EXPORT (interposed
 * entry points and the public API in sluice.h) is visible to the program and the loader. */
#ifndef SLUICE_COMMON_EXPORT_H
#define SLUICE_COMMON_EXPORT_H
#define SLUICE_EXPORT __attribute__((visibility("default")))
#endif
