/*
 * commands.h - the subcommands, one tools/cmd_<name>.c each. Each takes
 * argv with argv[0] the subcommand's name and returns an exit code (cli.h).
 */
#ifndef TALLY_COMMANDS_H
#define TALLY_COMMANDS_H

int tl_cmd_inspect(int argc, char **argv);
int tl_cmd_validate(int argc, char **argv);
int tl_cmd_summary(int argc, char **argv);
int tl_cmd_aggregate(int argc, char **argv);
int tl_cmd_merge(int argc, char **argv);
int tl_cmd_report(int argc, char **argv);
int tl_cmd_compare(int argc, char **argv);
int tl_cmd_trend(int argc, char **argv);
int tl_cmd_watch(int argc, char **argv);

#endif
