// Umbrella header for the CQRencode system-library target: pkg-config supplies the flags.
#include <qrencode.h>
