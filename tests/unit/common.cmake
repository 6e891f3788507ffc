# Tests of common/ (what libtally and the command share): the output module.
tally_add_unit_test(test_output SOURCES test_output.c LIBS tally_common)
