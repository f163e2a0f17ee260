"""Model registry shared by ingest and retrievers.

Importing this package sets ``OMP_WAIT_POLICY=PASSIVE`` unless the user chose otherwise, before
any loader imports torch: with OpenMP's default spin-waiting, a torch forward pass beside a render
thread (or any other busy process) on a 2-core machine ran 20x slower than with passive waiting.
"""

import os as _os

_os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
