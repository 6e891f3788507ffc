// simdjson_dur.cpp - bench_simdjson_dur: the reference point of bench_ingest's table. Sums
// "dur" over "traceEvents" of a trace with simdjson's On Demand API (the whole file in memory,
// as simdjson requires), and prints the event count and the sum. Built only when the simdjson
// package is present (Debian libsimdjson-dev); C++ for this program alone.
//
//   bench_simdjson_dur TRACE.json
#include <simdjson.h>

#include <cstdio>

int main(int argc, char **argv)
{
    if (argc != 2) {
        std::fprintf(stderr, "usage: %s TRACE.json\n", argv[0]);
        return 2;
    }
    simdjson::padded_string json;
    if (simdjson::padded_string::load(argv[1]).get(json)) {
        std::fprintf(stderr, "%s: cannot read\n", argv[1]);
        return 1;
    }
    simdjson::ondemand::parser parser;
    simdjson::ondemand::document doc;
    if (parser.iterate(json).get(doc)) {
        std::fprintf(stderr, "%s: not JSON\n", argv[1]);
        return 1;
    }
    double sum = 0;
    unsigned long events = 0;
    simdjson::ondemand::array arr;
    if (doc["traceEvents"].get_array().get(arr)) {
        std::fprintf(stderr, "%s: no traceEvents array\n", argv[1]);
        return 1;
    }
    for (auto ev : arr) {
        simdjson::ondemand::object o;
        if (ev.get_object().get(o))
            return 1;
        double d;
        if (!o["dur"].get_double().get(d))
            sum += d;
        events++;
    }
    std::printf("%lu events, dur sum %.3f us\n", events, sum);
    return 0;
}
