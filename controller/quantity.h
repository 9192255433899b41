/* quantity.h - Kubernetes resource quantities: exact parse and canonical text. */
#ifndef MPI_OPERATOR_QUANTITY_H
#define MPI_OPERATOR_QUANTITY_H

typedef __int128 qty_t; /* nano units */

/* Parses "500m", "1.5Gi", "2e3"... into nano units (rounded up); *binary is set when
 * the suffix is Ki..Ei. -1 when malformed or out of range. */
int quantity_parse(const char *s, qty_t *nano, int *binary);

/* The canonical text of a quantity (binary = written with a binary suffix), as
 * apimachinery's Quantity.String(); NULL on allocation failure. Caller frees. */
char *quantity_format(qty_t nano, int binary);

#endif
