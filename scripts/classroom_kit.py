"""Build the classroom kit: a folder to copy onto student laptops, that installs and runs the cookbook with no network.

    python scripts/classroom_kit.py                                               # this machine, into kit/
    python scripts/classroom_kit.py --platform windows macos linux --python 3.12  # a class of mixed laptops
    python scripts/classroom_kit.py --out /media/usb/cookbook-kit                 # elsewhere

Building downloads the wheels from PyPI (about 100 MB per system and Python); this machine's pip configuration is not
read, so the kit holds what any machine would get. Installing from the kit and running it need no network.
"""

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the repository's root, for cookbook_tools

from cookbook_tools import kit  # noqa: E402


class Progress:
    """In a terminal, package counts rewrite one line; elsewhere (a log) one is printed every few seconds, so that the
    long download shows it is alive."""

    def __init__(self, every=5.0):
        self.every, self.printed = every, 0.0

    def __call__(self, message, transient=False):
        if sys.stdout.isatty():
            print("\r\033[K" + message, end="" if transient else "\n", flush=True)
        elif not transient:
            print(message, flush=True)
        elif time.monotonic() - self.printed >= self.every:
            print(message, flush=True)
            self.printed = time.monotonic()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=kit.ROOT / "kit", help="the kit's folder (default: kit/)")
    parser.add_argument("--platform", nargs="+", choices=kit.PLATFORM_CHOICES, default=["this"],
                        help="the students' systems (default: this machine's); macos means both arm64 and x86_64")
    parser.add_argument("--python", nargs="+", default=[kit.THIS_PYTHON], metavar="3.X",
                        help=f"the students' Python versions, 3.11 to 3.14 (default: this one, {kit.THIS_PYTHON})")
    parser.add_argument("--index-url", default=kit.PYPI, help="a mirror of PyPI to download from (default: PyPI)")
    arguments = parser.parse_args()
    progress = Progress()
    try:
        out = kit.build(arguments.out, kit.targets(arguments.platform, arguments.python), arguments.index_url,
                        report=progress)
    except kit.KitError as error:
        sys.exit(f"\nclassroom_kit: {error}")
    progress(f"built {out} ({kit.folder_size(out) / 1e6:.0f} MB): copy it to the laptops; {out / 'README.txt'} says "
             "what students type")


if __name__ == "__main__":
    main()
