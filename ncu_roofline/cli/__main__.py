"""`python -m ncu_roofline.cli`: the same command as `ncu-roofline`."""

from . import main

main()
