/*
 * docs_tables.c - docs/analysis.md's generated tables (see docs_tables.h).
 * Markdown escaping is not needed: the tables are ours.
 */
#include "docs_tables.h"

#include "aggregate.h"
#include "metrics.h"
#include "profile.h"
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

void tl_docs_rules(FILE *f)
{
    size_t n;
    const tl_rule_info *rules = tl_rules(&n);
    fputs("| rule | severity | condition | preconditions | evidence | advice |\n|---|---|---|---|---|---|\n", f);
    for (size_t i = 0; i < n; i++)
        fprintf(f, "| `%s` | %s | %s | %s | %s | %s |\n", rules[i].id,
                rules[i].scale ? rules[i].scale : rules[i].severity, rules[i].condition, rules[i].preconditions,
                rules[i].evidence, rules[i].advice);
}
