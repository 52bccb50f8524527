/*
 * dg_crc32c.h -- CRC-32C (Castagnoli), the checksum of TensorFlow's
 * checkpoints (tensor bundles and their LevelDB-format index tables), and
 * the "masked" form those files store.
 */
#ifndef DG_CRC32C_H
#define DG_CRC32C_H

#include <stddef.h>
#include <stdint.h>

/* CRC-32C of p[0..n) continuing from crc (start with 0): chain calls to
 * checksum several pieces, dg_crc32c(dg_crc32c(0, a, na), b, nb) equals
 * the CRC of a followed by b.  Uses the SSE 4.2 instruction where the CPU
 * has it, a table otherwise; thread-safe. */
uint32_t dg_crc32c(uint32_t crc, const void *p, size_t n);

/* The masked CRC TensorFlow and LevelDB store ((crc >> 15 | crc << 17) +
 * 0xa282ead8), and its inverse. */
uint32_t dg_crc32c_mask(uint32_t crc);
uint32_t dg_crc32c_unmask(uint32_t masked);

#endif
