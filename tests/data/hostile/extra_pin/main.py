"""Would print the versions of a pin the runtime lacks and of one it has; it must never get to run."""

import pandas
import tabulate

print(tabulate.__version__, pandas.__version__)
