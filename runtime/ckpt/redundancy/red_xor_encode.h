/* SPDX-License-Identifier: MIT */
/* XOR parity of node-local versions while the job runs (red_xor_encode.c). */
#ifndef SLUICE_CKPT_REDUNDANCY_RED_XOR_ENCODE_H
#define SLUICE_CKPT_REDUNDANCY_RED_XOR_ENCODE_H

#include "ckpt/redundancy/red_nodes.h"

#include <stdint.h>

/* Every rank of this node recorded version `version` of key: this leader encodes the node's part
 * into its set's parities. Progress thread. */
void red_xor_start(const struct red_nodes *n, const char *key, uint64_t version, int nprocs);
/* 1 while a stream of this node is not answered in full. */
int red_xor_busy(void);
/* Progress thread, every round: sends the pieces read, answers those XORed in. */
int red_xor_poll(void);
/* Forgets finished or failed parities of key up to version (a drain made them useless). */
void red_xor_drained(const char *key, uint64_t version);
/* Registers the handlers of MSG_RED_XOR and MSG_RED_XACK. */
void red_xor_handlers(void);

#endif
