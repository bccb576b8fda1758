"""A Dask cluster on SLURM for gameforge (dask-jobqueue): the scheduler on this node at an
explicit address, workers as SLURM jobs, every connection over TLS.

    pip install dask-jobqueue            # in gameforge's environment, on the login node
    python infra/slurm/dask_slurm.py --host 10.0.0.5 --jobs 8 --partition compute \\
        --account myproj --walltime 08:00:00 --interface ib0 \\
        --tls-ca ca.pem --tls-cert node.pem --tls-key node-key.pem
    # then, in another shell on the same node:
    export GAMEFORGE_TLS_CA_FILE=ca.pem GAMEFORGE_TLS_CERT=client.pem \
        GAMEFORGE_TLS_KEY=client-key.pem
    gameforge run lhe-abstraction --preset paper --dask-address tls://10.0.0.5:8786 \
        --store /shared/store

`--dry-run` prints the batch script a worker job would run and exits (no job is submitted).
Each job runs one single-threaded worker process per core (numba kernels parallelise across
processes; NUMBA_NUM_THREADS=1 keeps each to its core). The store must be a path every node
sees (a shared filesystem).
"""

from __future__ import annotations

import argparse
import sys
import time


def make_cluster(args: argparse.Namespace):  # noqa: ANN201 (dask_jobqueue is optional)
    """The SLURMCluster these arguments describe (its scheduler starts on construction)."""
    from dask_jobqueue import SLURMCluster
    from distributed.security import Security

    security = Security(
        tls_ca_file=args.tls_ca,
        tls_client_cert=args.tls_cert,
        tls_client_key=args.tls_key,
        tls_scheduler_cert=args.tls_cert,
        tls_scheduler_key=args.tls_key,
        tls_worker_cert=args.tls_cert,
        tls_worker_key=args.tls_key,
        require_encryption=True,
    )
    return SLURMCluster(
        queue=args.partition,
        account=args.account,
        walltime=args.walltime,
        cores=args.cores,
        processes=args.cores,  # one single-threaded worker per core
        memory=args.memory,
        interface=args.interface,  # workers listen on this interface only
        protocol="tls://",
        security=security,
        scheduler_options={
            "host": args.host,
            "port": args.port,
            "dashboard_address": "127.0.0.1:8787",  # reach it through an ssh tunnel
        },
        worker_extra_args=["--dashboard-address", "127.0.0.1:0"],
        job_script_prologue=[
            "export NUMBA_NUM_THREADS=1 OMP_NUM_THREADS=1",
            f"cd {args.workdir}",
        ],
        python=args.python,
        job_name="gameforge-dask",
    )


def main() -> None:
    """Start the cluster, scale it to --jobs, print its address; run until interrupted."""
    parser = argparse.ArgumentParser(description=__doc__.partition("\n")[0])
    parser.add_argument("--host", required=True, help="scheduler address (this node)")
    parser.add_argument("--port", type=int, default=8786)
    parser.add_argument("--jobs", type=int, default=1, help="SLURM jobs of workers")
    parser.add_argument("--cores", type=int, default=32, help="cores (= workers) per job")
    parser.add_argument("--memory", default="120GB", help="memory per job")
    parser.add_argument("--partition", default=None)
    parser.add_argument("--account", default=None)
    parser.add_argument("--walltime", default="08:00:00")
    parser.add_argument("--interface", default=None, help="network interface of the workers")
    parser.add_argument("--python", default=sys.executable, help="python of gameforge's venv")
    parser.add_argument("--workdir", default=".", help="directory the workers start in")
    parser.add_argument("--tls-ca", required=True)
    parser.add_argument("--tls-cert", required=True)
    parser.add_argument("--tls-key", required=True)
    parser.add_argument("--dry-run", action="store_true", help="print the job script, submit none")
    args = parser.parse_args()
    cluster = make_cluster(args)
    try:
        if args.dry_run:
            print(cluster.job_script())
            return
        cluster.scale(jobs=args.jobs)
        print(f"scheduler {cluster.scheduler_address}: pass it as --dask-address", flush=True)
        while True:
            time.sleep(60)
    finally:
        cluster.close()


if __name__ == "__main__":
    main()
