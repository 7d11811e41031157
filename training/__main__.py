"""``python -m training``: the quick demo on embedded defaults (see training.demo)."""

from training.demo import main

if __name__ == "__main__":  # worker processes re-import this module; only the parent runs the demo
    raise SystemExit(main())
