# Tests of the command line shared by the subcommands (tools/cli.c: tally_commands).
# Included from tests/unit/CMakeLists.txt.
#   test_cli   --jobs's default: the affinity mask and the cgroup v2 quota, not the machine
tally_add_unit_test(test_cli SOURCES test_cli.c LIBS tally_commands LABELS cli)
