/*
 * docs_tables.c - docs/analysis.md's generated tables (see docs_tables.h).
 * Markdown escaping is not needed: the tables are ours.
 */
#include "docs_tables.h"

#include <string.h>

#include "aggregate.h"
#include "metrics.h"
#include "profile.h"
#include "text_numbers.h"
#include "units.h"

void tl_docs_kernel_types(FILE *f)
{
    size_t n;
    const tl_kernel_class_row *table = tl_kernel_class_table(&n);
    fputs("| pattern | type | where the name comes from |\n|---|---|---|\n", f);
    fputs("| (category `cuda_sync`) | other | CUDA/HIP synchronization events that carry a stream |\n", f);
    for (size_t i = 0; i < n; i++)
        fprintf(f, "| `%s` | %s | %s |\n", table[i].pattern, tl_kernel_type_name(table[i].type), table[i].source);
    fputs("| (category `gpu_memcpy`, `gpu_memset`, `Memcpy`, `Memset`) | memory | copies and fills, whatever their "
          "name |\n",
          f);
    fputs("| anything else | compute | |\n", f);
}

void tl_docs_metrics(FILE *f)
{
    static const char *const units[] = { [TL_UNIT_COUNT] = "number",
                                         [TL_UNIT_NS] = "ns",
                                         [TL_UNIT_BYTES] = "bytes",
                                         [TL_UNIT_PCT] = "%",
                                         [TL_UNIT_RATIO] = "ratio" };
    size_t n;
    const tl_metric *registry = tl_metrics(&n);
    fputs("| metric | label | unit | better | for the job | shown in | definition (per rank) |\n"
          "|---|---|---|---|---|---|---|\n",
          f);
    for (size_t i = 0; i < n; i++) {
        const tl_metric *m = &registry[i];
        fprintf(f, "| `%s` | %s | %s | %s | %s | %s%s | %s |\n", m->name, m->label, units[m->unit],
                tl_better_name(m->better), tl_across_policy_name(m->policy),
                m->section == TL_SECTION_TELEMETRY ? "telemetry" : "across ranks",
                m->compared_elsewhere ? "" : ", compare's metrics", m->definition);
    }
}

const tl_rule_threshold *tl_docs_threshold(const char *name, size_t len)
{
    size_t n;
    const tl_rule_threshold *t = tl_rule_thresholds(&n);
    for (size_t i = 0; i < n; i++)
        if (strlen(t[i].name) == len && memcmp(t[i].name, name, len) == 0)
            return &t[i];
    return NULL;
}

/* A rule's text with each {NAME} replaced by its threshold's value, written
 * as the findings write it; an unknown name stays as it is (test_docs fails
 * on it). */
static void rule_text(FILE *f, const char *s)
{
    for (const char *p = s; *p;) {
        const char *open = strchr(p, '{'), *close = open ? strchr(open, '}') : NULL;
        const tl_rule_threshold *t = close ? tl_docs_threshold(open + 1, (size_t)(close - open - 1)) : NULL;
        if (t == NULL) {
            fputs(p, f);
            return;
        }
        char buf[48];
        fwrite(p, 1, (size_t)(open - p), f);
        fputs(tl_text_number(buf, sizeof buf, (tl_num_kind)t->kind, t->value), f);
        p = close + 1;
    }
}

void tl_docs_rules(FILE *f)
{
    size_t n;
    const tl_rule_info *rules = tl_rules(&n);
    fputs("| rule | severity | condition | preconditions | evidence | advice |\n|---|---|---|---|---|---|\n", f);
    for (size_t i = 0; i < n; i++) {
        const char *texts[] = { rules[i].scale ? rules[i].scale : rules[i].severity, rules[i].condition,
                                rules[i].preconditions, rules[i].evidence, rules[i].advice };
        fprintf(f, "| `%s` |", rules[i].id);
        for (size_t k = 0; k < sizeof texts / sizeof texts[0]; k++) {
            fputc(' ', f);
            rule_text(f, texts[k]);
            fputs(" |", f);
        }
        fputc('\n', f);
    }
}
