#!/usr/bin/env python3
"""gen_perseus.py OUT SLOWDISK FACTOR [SEED] - a generated host directory in
the Perseus CSV format for the fail-slow tests: two day files of 3 hours,
12 drives at 15 s steps, one drive listed after another as the public files
are, latency on a square-root curve of the load with lognormal noise, every
97th sample of a drive missing ("NA"); drive SLOWDISK ("none": no drive)
FACTOR times slower."""
import math
import os
import random
import sys

out, slow, factor = sys.argv[1], sys.argv[2], float(sys.argv[3])
rnd = random.Random(int(sys.argv[4]) if len(sys.argv) > 4 else 7)
os.makedirs(out, exist_ok=True)
for day, t0 in (("2022-07-18", 1658149200), ("2022-07-19", 1658235600)):
    with open(os.path.join(out, day + ".csv"), "w") as f:
        f.write('"ts","disk_id","throughput","latency"\n')
        for k in range(1, 13):
            disk = "disk%d" % k
            for i in range(720):
                load = 2e7 * (1 + 0.5 * math.sin(i / 90.0))
                x = load * math.exp(rnd.gauss(0, 0.1))
                y = 80 * math.sqrt(x / 2e7) * math.exp(rnd.gauss(0, 0.1))
                if disk == slow:
                    y *= factor
                if i % 97 == 5:
                    f.write('%d,"%s",NA,NA\n' % (t0 + 15 * i, disk))
                else:
                    f.write('%d,"%s",%.2f,%.2f\n' % (t0 + 15 * i, disk, x, y))
