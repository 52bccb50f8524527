/*
 * partition.h -- cross-device edges (SPEC 4.6).
 *
 * After placement, every data edge whose producer and consumer sit on
 * different devices needs a transfer; there is one transfer per (producer
 * output, consumer device).  Control edges across devices are ordering only
 * and need none.
 */
#ifndef DGC_PARTITION_H
#define DGC_PARTITION_H

#include "ir.h"

typedef struct dgc_transfer {
    dgc_ref src;            /* producer output */
    int32_t src_device;     /* device indices into the compile's list */
    int32_t dst_device;
    int32_t first_consumer; /* first consumer (graph order) on dst_device */
} dgc_transfer;

/* List the transfers among nodes with active[i] != 0 (active NULL = every
 * node), in consumer graph order.  *out is dg_malloc'd (free with dg_free).
 * Requires placement.  DG_E_NOMEM on failure. */
dg_status dgc_partition(const dgc_graph *g, const uint8_t *active,
                        dgc_transfer **out, int *n_out, dg_error *err);

#endif
