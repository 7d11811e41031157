"""Sending agents to other processes (the registry entries of the agents, pickled by value)
and Ray, the optional backend of tournaments and training (one place that joins or starts it)."""

from __future__ import annotations

import os
import pickle
import sys
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any

import cloudpickle

from agents.base import install_registry_entries, registry_entries
from training.config import ConfigError


@contextmanager
def ray_session(address: str | None, num_cpus: int | None, needed_by: str,
                log_to_driver: bool = False) -> Iterator[Any]:
    """The ``ray`` module, joined to the cluster at ``address``, to a Ray this process already
    runs, or to a local Ray with ``num_cpus`` started here (and shut down on exit).

    A local Ray's workers get this process's import path, so agents named ``module:Class``
    or given as objects import there as they do here; a cluster's workers need those
    modules installed or shipped with Ray's ``runtime_env``. ``needed_by`` names the
    setting that asked for Ray, for the error when Ray is not installed; ``log_to_driver``
    shows the workers' output here."""
    try:
        import ray
    except ImportError as err:
        raise ConfigError(f"{needed_by} needs Ray: pip install 'rummy-envs[distributed]'") from err
    started_here = not ray.is_initialized()
    if started_here:
        runtime_env = None if address else {"env_vars": {"PYTHONPATH": os.pathsep.join(
            os.path.abspath(p or os.curdir) for p in sys.path)}}
        ray.init(address=address, num_cpus=None if address else num_cpus, runtime_env=runtime_env,
                 include_dashboard=False, log_to_driver=log_to_driver)
    try:
        yield ray
    finally:
        if started_here:
            ray.shutdown()


def packed_registry(names: Iterable[str]) -> bytes:
    """The registry entries of these agent names, pickled by value (cloudpickle), for worker
    processes that never ran the ``register`` calls: lambdas and classes defined in a
    notebook or a script's ``__main__`` travel too. Refused here, before any game, when an
    entry cannot be pickled at all (an object holding a lock or an open file)."""
    entries = registry_entries(names)
    for name, by_game in entries.items():
        try:
            cloudpickle.dumps(by_game)
        except Exception as err:  # noqa: BLE001 - pickling raises whatever the object raises
            raise ConfigError(f"agent {name!r} cannot be sent to worker processes: it does not pickle ({err}); "
                              "give it as a class or function that builds a fresh agent, or play with "
                              "workers: 1") from None
    return cloudpickle.dumps(entries)


def install_packed_registry(packed: bytes | None) -> None:
    """Register, in a worker process, what ``packed_registry`` sent."""
    if packed:
        install_registry_entries(pickle.loads(packed))
