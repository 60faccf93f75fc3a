// Headers only: TagLib's C API is loaded with dlopen while a library is scanned (CTagLibShim).
#include <taglib/tag_c.h>
