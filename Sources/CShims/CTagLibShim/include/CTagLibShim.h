// TagLib's C API through dlopen, held only while the DJ scans its library: a DJ that is not scanning
// does not map libtag (about 0.8 MB resident) and a command that never scans never loads it.
#ifndef PARTYRADIO_CTAGLIBSHIM_H
#define PARTYRADIO_CTAGLIBSHIM_H

/// TagLib's C library (Debian 12: libtagc0); it is loaded with dlopen, not linked.
#define PRTAG_SONAME "libtag_c.so.0"

/// Loads TagLib for one user (counted; the first loads it): 0, or -1 with the reason in
/// `prtag_load_error()`. Every successful call needs one `prtag_release()`. Thread-safe.
int prtag_acquire(void);

/// Lets go of TagLib; the last user unloads it.
void prtag_release(void);

/// How many users hold TagLib now (0: it is not loaded).
int prtag_users(void);

/// Why TagLib could not be loaded, one sentence with the fix ("" when it was).
const char *prtag_load_error(void);

/// What `prtag_read` found. The strings are TagLib's (UTF-8), freed with `prtag_free`, or NULL.
typedef struct {
    /// 0: read; 1: TagLib cannot open it; 2: TagLib cannot read it; 3: no audio stream in it.
    int status;
    int seconds;
    int sample_rate;
    char *title;
    char *artist;
    char *album;
} prtag_result;

/// Reads one file's audio properties and tags (between `prtag_acquire` and `prtag_release`).
prtag_result prtag_read(const char *path);

/// Frees a string of a `prtag_result`.
void prtag_free(char *string);

#endif
