# Tests of common/ (what libtally and the command share): the output module, growing arrays.
tally_add_unit_test(test_output SOURCES test_output.c LIBS tally_common)
# How a growing array grows (common/array.h).
tally_add_unit_test(test_array SOURCES test_array.c LIBS tally_common)
