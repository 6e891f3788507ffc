"""A real 4-rank DDP training job on the CPU (torch + gloo) timed with tally's Python module.

Run by test_module.py's TestDdp (4 processes, torchrun's environment by hand):
    RANK=r WORLD_SIZE=4 MASTER_ADDR=127.0.0.1 MASTER_PORT=p python3 ddp_tally_job.py OUTDIR SLOW_RANK SLOW_MS
Each of STEPS steps, in tally.iteration("train_step"): data_loading (the slow rank sleeps SLOW_MS
in it, a slow host-side loader), forward, backward (DDP's gloo all-reduce of the gradients, in
two buckets, timed by tally.torch.register_ddp), optimizer_step. tally writes each rank's report
and trace into OUTDIR.
"""
import os
import sys
import time

out, slow_rank, slow_ms = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
os.environ["TALLY_OUTPUT_DIR"] = out
os.environ.setdefault("TALLY_NAME", "ddp")

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
from torch.nn.parallel import DistributedDataParallel as DDP  # noqa: E402

import tally  # noqa: E402
import tally.torch  # noqa: E402

STEPS = 12
torch.set_num_threads(1)
dist.init_process_group("gloo")
rank = dist.get_rank()
tally.set_rank(rank, dist.get_world_size())
torch.manual_seed(0)
layers = []
for _ in range(4):
    layers += [torch.nn.Linear(512, 512), torch.nn.GELU()]
model = DDP(torch.nn.Sequential(*layers, torch.nn.Linear(512, 10)), bucket_cap_mb=2)
tally.torch.register_ddp(model)
opt = torch.optim.SGD(model.parameters(), lr=1e-3)
loss_fn = torch.nn.CrossEntropyLoss()
g = torch.Generator().manual_seed(rank)
for step in range(STEPS):
    with tally.iteration("train_step"):
        with tally.section("data_loading"):
            if rank == slow_rank:
                time.sleep(slow_ms / 1000.0)
            x, y = torch.randn(32, 512, generator=g), torch.randint(0, 10, (32,), generator=g)
        with tally.section("forward"):
            loss = loss_fn(model(x), y)
        with tally.section("backward"):
            opt.zero_grad(set_to_none=True)
            loss.backward()
        with tally.section("optimizer_step"):
            opt.step()
    tally.step()
dist.destroy_process_group()
tally.shutdown()
