/*
 * dtype.c - the size of a tensor element from the name a trace gives its
 * type: Kineto's "Input type" (the C++ name: "float", "c10::BFloat16",
 * "long int"), record_param_comms' "dtype" (c10's ScalarType: "Float",
 * "BFloat16", "Long") and the short names ("fp16", "bf16", "int8").
 *
 * The one idea: a table, looked up case-insensitively; a name it does not
 * hold is unknown (-1), never a guess, so a byte count is either right or
 * absent (docs/analysis.md, "Collective bandwidth").
 */
#include "profile.h"

#include <string.h>
#include <strings.h>

static const struct {
    const char *name;
    int bytes;
} dtypes[] = {
    { "float", 4 },
    { "float32", 4 },
    { "fp32", 4 },
    { "tf32", 4 },
    { "double", 8 },
    { "float64", 8 },
    { "fp64", 8 },
    { "c10::Half", 2 },
    { "Half", 2 },
    { "float16", 2 },
    { "fp16", 2 },
    { "c10::BFloat16", 2 },
    { "BFloat16", 2 },
    { "bf16", 2 },
    { "long int", 8 },
    { "long", 8 },
    { "int64", 8 },
    { "long long", 8 },
    { "int", 4 },
    { "int32", 4 },
    { "short int", 2 },
    { "short", 2 },
    { "int16", 2 },
    { "unsigned char", 1 },
    { "Byte", 1 },
    { "uint8", 1 },
    { "signed char", 1 },
    { "Char", 1 },
    { "int8", 1 },
    { "bool", 1 },
    { "c10::complex<float>", 8 },
    { "ComplexFloat", 8 },
    { "c10::complex<double>", 16 },
    { "ComplexDouble", 16 },
    { "c10::Float8_e4m3fn", 1 },
    { "Float8_e4m3fn", 1 },
    { "c10::Float8_e5m2", 1 },
    { "Float8_e5m2", 1 },
    { "fp8", 1 },
    { "unsigned int", 4 },
    { "UInt32", 4 },
    { "UInt16", 2 },
    { "UInt64", 8 },
};

int tl_dtype_bytes(const char *name, size_t len)
{
    for (size_t i = 0; i < sizeof dtypes / sizeof dtypes[0]; i++)
        if (strlen(dtypes[i].name) == len && strncasecmp(dtypes[i].name, name, len) == 0)
            return dtypes[i].bytes;
    return -1;
}
