// Umbrella header for the CSQLite system-library target: pkg-config supplies the flags.
#include <sqlite3.h>
