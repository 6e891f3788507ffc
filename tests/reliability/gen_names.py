# A trace with N distinct kernel names; name i occurs (i % 7) + 1 times, so the
# most frequent names are known. usage: gen_names.py N OUT.json
import sys
n = int(sys.argv[1]); out = sys.argv[2]
with open(out, "w") as f:
    f.write('{"traceEvents":[\n')
    for i in range(n):
        # name i occurs (i % 7) + 1 times: the frequent ones must be kept
        for k in range(i % 7 + 1):
            f.write('{"ph":"X","cat":"kernel","name":"kernel_%07d","ts":%d,"dur":%d,"pid":0,"tid":7,"args":{"stream":7,"device":0}},\n' % (i, i * 100 + k * 10, 5 + (i % 3)))
    f.write('{"ph":"X","cat":"cpu_op","name":"end","ts":0,"dur":1,"pid":1,"tid":1}]}\n')
