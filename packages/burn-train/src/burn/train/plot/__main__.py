"""`python -m burn.train.plot ARTIFACT_DIR [--output DIR]`: the metric PNGs of a finished (or
running) training, from the text logs in its artifact folder."""

from __future__ import annotations

import argparse
import sys

from burn.train.plot import plot_artifact_dir
from burn.train.tracking.base import TrackingError


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m burn.train.plot",
        description="Write one PNG per numeric metric of a Learner's artifact folder.",
    )
    parser.add_argument("artifact_dir", help="the folder given to LearnerBuilder")
    parser.add_argument(
        "--output", default=None, help="where the PNGs go (default: ARTIFACT_DIR/plots)"
    )
    args = parser.parse_args(argv)
    try:
        written = plot_artifact_dir(args.artifact_dir, args.output)
    except TrackingError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    if not written:
        print(
            f"error: {args.artifact_dir} has no numeric metric logs under train/, valid/ or test/",
            file=sys.stderr,
        )
        return 1
    for path in written:
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
