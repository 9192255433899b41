/* plugin_table.c - kubectl's table layout: columns left-aligned, padded to the widest cell plus
 * three spaces, the last column unpadded; an empty or missing cell shows as <none>. */
#include "plugin.h"

#include <string.h>

static const char *cell_at(const char *const *cells, size_t cols, size_t r, size_t c)
{
    const char *v = cells[r * cols + c];
    return v && *v ? v : "<none>";
}

void plugin_table_print(FILE *f, const char *indent, const char *const *cells, size_t rows, size_t cols)
{
    for (size_t r = 0; r < rows; r++) {
        fputs(indent, f);
        for (size_t c = 0; c + 1 < cols; c++) {
            size_t w = 0;
            for (size_t k = 0; k < rows; k++)
                w = strlen(cell_at(cells, cols, k, c)) > w ? strlen(cell_at(cells, cols, k, c)) : w;
            fprintf(f, "%-*s   ", (int)w, cell_at(cells, cols, r, c));
        }
        fprintf(f, "%s\n", cols ? cell_at(cells, cols, r, cols - 1) : "");
    }
}
