/*
 * commands.h - the subcommands, one tools/cmd_<name>.c each. Each takes
 * argv with argv[0] the subcommand's name and the engine its analysis runs
 * on (cli.h's tl_engine: NULL in tally, tally-mpi's own), and returns an exit
 * code (cli.h).
 */
#ifndef TALLY_COMMANDS_H
#define TALLY_COMMANDS_H

#include "cli.h"

int tl_cmd_inspect(int argc, char **argv, const tl_engine *engine);
int tl_cmd_validate(int argc, char **argv, const tl_engine *engine);
int tl_cmd_summary(int argc, char **argv, const tl_engine *engine);
int tl_cmd_aggregate(int argc, char **argv, const tl_engine *engine);
int tl_cmd_merge(int argc, char **argv, const tl_engine *engine);
int tl_cmd_report(int argc, char **argv, const tl_engine *engine);
int tl_cmd_compare(int argc, char **argv, const tl_engine *engine);
int tl_cmd_trend(int argc, char **argv, const tl_engine *engine);
int tl_cmd_watch(int argc, char **argv, const tl_engine *engine);

#endif
