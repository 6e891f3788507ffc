/*
 * straggler_limits.h - the thresholds of the straggler analysis
 * (stragglers.c), in a header of their own because the rule table (rules.c)
 * names them in the straggler rule's texts: each value is written once.
 */
#ifndef TALLY_ANALYZE_STRAGGLER_LIMITS_H
#define TALLY_ANALYZE_STRAGGLER_LIMITS_H

#define STRAGGLER_MIN_STEPS 3        /* comparable steps needed to compare ranks */
#define STRAGGLER_FLOOR 0.05         /* slower than the others' median by more than 5 % */
#define STRAGGLER_SEVERE_EFFECT 0.25 /* critical: 25 % slower ... */
#define STRAGGLER_SEVERE_SHARE 0.9   /* ... in 90 % of at least ... */
#define STRAGGLER_SEVERE_STEPS 5     /* ... 5 steps */
#define STRAGGLER_WARN_EFFECT 0.10   /* warning: 10 % slower in two thirds of the steps */

#endif
