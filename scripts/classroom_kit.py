"""Build the classroom kit: a folder to copy onto student laptops, that installs and runs the cookbook with no network.

    python scripts/classroom_kit.py                                               # this machine, into kit/
    python scripts/classroom_kit.py --platform windows macos linux --python 3.12  # a class of mixed laptops
    python scripts/classroom_kit.py --out /media/usb/cookbook-kit                 # elsewhere

Building downloads the wheels from PyPI (about 100 MB per system and Python); this machine's pip configuration is not
read, so the kit holds what any machine would get. Installing from the kit and running it need no network.
"""

from cookbook_tools.kit import classroom_kit

if __name__ == "__main__":
    classroom_kit()
