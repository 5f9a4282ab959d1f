"""`python -m gradgen.demo`: the command line of gradgen.demo."""

import sys

from gradgen.demo import _restart_with_one_blas_thread, main

if __name__ == "__main__":
    _restart_with_one_blas_thread()
    sys.exit(main())
