"""The JSON schemas of the two kinds of config, for editors that check YAML as it is typed:
``python -m training.schema [FOLDER]`` writes ``train_config.schema.json`` and
``tournament_config.schema.json`` into FOLDER (default: the current folder)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from training.config import ConfigModel
from training.tournament import TournamentConfig
from training.train_config import TrainConfig

SCHEMAS: dict[str, type[ConfigModel]] = {"train_config": TrainConfig, "tournament_config": TournamentConfig}


def config_schema(model: type[ConfigModel]) -> dict[str, Any]:
    """The JSON schema (draft 2020-12) of the configs ``model`` accepts."""
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", **model.model_json_schema()}


def write_schemas(folder: str | Path) -> list[Path]:
    """Write ``<kind>.schema.json`` for both kinds of config into ``folder``; the paths written."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, model in SCHEMAS.items():
        path = folder / f"{name}.schema.json"
        path.write_text(json.dumps(config_schema(model), indent=2) + "\n")
        paths.append(path)
    return paths


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m training.schema", description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", nargs="?", default=".", help="where to write the two schema files")
    for path in write_schemas(parser.parse_args(argv).folder):
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
