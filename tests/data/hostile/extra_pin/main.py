"""Prints the versions of a pin missing from the runtime image and of one it has."""

import pandas
import tabulate

print(tabulate.__version__, pandas.__version__)
