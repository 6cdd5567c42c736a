"""A job that hangs because one rank never joins it (tests/integration/test_jobs.py): gloo ranks on
loopback, the last one (or ABSENT_RANK) leaving before it calls init_process_group, as a script
does that returns early on a rank it thinks has nothing to do. The others wait in
init_process_group for a rank that no process will ever be.

    torchrun --master_addr 127.0.0.1 --master_port PORT --nproc_per_node=4 job_missing_rank.py READY_DIR ABSENT_RANK
    python3 job_missing_rank.py --spawn 4 READY_DIR ABSENT_RANK    # torch.multiprocessing.spawn

Each present rank writes READY_DIR/rankR-PID.ready just before init_process_group, with its
ground truth as JSON (its rank, the world size it was given, the rank it waits for); the absent
rank writes READY_DIR/rankR-PID.gone as it leaves. The call the others wait in is marked
JOIN-WAITS (the test reads the line number from this file)."""
import json
import os
import sys

import torch
import torch.distributed as dist


def write_truth(ready_dir, rank, suffix, truth):
    path = os.path.join(ready_dir, "rank%d-%d.%s" % (rank, os.getpid(), suffix))
    with open(path + ".tmp", "w") as out:
        json.dump(truth, out)
    os.rename(path + ".tmp", path)


def join_the_job(rank, world_size, absent_rank, ready_dir, init_method):
    if rank == absent_rank:
        # "Nothing to do on this rank": it returns before it joins, and never will.
        write_truth(ready_dir, rank, "gone", {"rank": rank, "world_size": world_size, "joined": False})
        return
    write_truth(ready_dir, rank, "ready", {"rank": rank, "world_size": world_size,
                                           "waits_in": "init_process_group",
                                           "waits_for_ranks": [absent_rank]})
    group = dict(init_method=init_method, rank=rank, world_size=world_size)
    dist.init_process_group("gloo", **group)  # JOIN-WAITS
    dist.barrier()


def spawned_rank(rank, world_size, port, absent_rank, ready_dir):
    torch.set_num_threads(1)
    join_the_job(rank, world_size, absent_rank, ready_dir, "tcp://127.0.0.1:%d" % port)


def main():
    if sys.argv[1] == "--spawn":
        import torch.multiprocessing as mp
        from job_allreduce_hang import free_port  # a program of this directory, as this one
        world_size = int(sys.argv[2])
        mp.spawn(spawned_rank, args=(world_size, free_port(), int(sys.argv[4]), sys.argv[3]),
                 nprocs=world_size, join=True)
        return
    ready_dir, absent_rank = sys.argv[1], int(sys.argv[2])
    torch.set_num_threads(1)
    join_the_job(int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"]), absent_rank, ready_dir,
                 "env://")


if __name__ == "__main__":
    main()
