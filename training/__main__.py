"""``python -m training``: the quick demo on embedded defaults (see training.demo)."""

from training.demo import main

raise SystemExit(main())
