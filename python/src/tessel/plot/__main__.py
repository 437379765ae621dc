"""`python -m tessel.plot RESULTS.json [-o FILE.png]`: see tessel.plot."""
import sys

from . import main

sys.exit(main())
