/*
 * read_report.c - the dispatcher of report documents (report_readers.h):
 * load once, tell the format (tl_report_kind) and hand the document to its
 * reader; a partial or merged aggregate is kept whole for the analysis.
 */
#include "report_readers.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A partial or merged aggregate: its sessions are already analyzed, so the
 * document is kept for the analysis to take them (tl_partial_read_json);
 * here only the ranks they hold are noted, for rank assignment. */
static int read_aggregate(tl_profile *p, json_t *root)
{
    p->id.format = TL_FMT_AGGREGATE;
    json_t *sessions = json_object_get(root, "sessions"), *s;
    size_t i, n = json_array_size(sessions);
    p->aggregate_ranks = malloc((n ? n : 1) * sizeof *p->aggregate_ranks);
    if (p->aggregate_ranks == NULL) {
        tl_profile_warn(p, "out of memory");
        return -1;
    }
    json_array_foreach(sessions, i, s)
    {
        json_t *r = json_object_get(s, "rank");
        if (json_is_integer(r) && json_integer_value(r) >= 0 && json_integer_value(r) <= INT_MAX)
            p->aggregate_ranks[p->naggregate_ranks++] = (int)json_integer_value(r);
    }
    int lo = INT_MAX, hi = -1;
    for (size_t k = 0; k < p->naggregate_ranks; k++) {
        lo = p->aggregate_ranks[k] < lo ? p->aggregate_ranks[k] : lo;
        hi = p->aggregate_ranks[k] > hi ? p->aggregate_ranks[k] : hi;
    }
    const char *kind = json_string_value(json_object_get(root, "format"));
    if (hi >= 0)
        snprintf(p->format_detail, sizeof p->format_detail, "%s: %zu sessions, ranks %d to %d",
                 kind && !strcmp(kind, "tally-partial") ? "partial" : "merged", n, lo, hi);
    else
        snprintf(p->format_detail, sizeof p->format_detail, "%s: %zu sessions, none usable",
                 kind && !strcmp(kind, "tally-partial") ? "partial" : "merged", n);
    p->aggregate_doc = json_incref(root);
    return 0;
}

int tl_read_report(tl_profile *p, const char *buf, size_t len)
{
    json_t *root;
    char why[256];
    int ret = -1;
    if (tl_readers_load(p, buf, len, &root) != 0)
        return -1;
    switch (tl_report_kind(root, why, sizeof why)) {
    case TL_FMT_TALLY_REPORT:
        ret = tl_read_tally_report_json(p, root);
        break;
    case TL_FMT_FRAMEPACK:
        ret = tl_read_framepack_json(p, root);
        break;
    case TL_FMT_INFERIX:
        ret = tl_read_inferix_json(p, root);
        break;
    case TL_FMT_AGGREGATE:
        ret = read_aggregate(p, root);
        break;
    default:
        tl_profile_skip(p, "not a profile: %s", why);
        break;
    }
    json_decref(root);
    return ret;
}
