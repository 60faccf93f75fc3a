#include "CTagLibShim.h"

#include <dlfcn.h>
#include <pthread.h>

#include "CDynamicLibrary.h"
#include <taglib/tag_c.h>

// The functions partyradio calls (CDynamicLibrary fills the table).
#define PRTAG_FUNCTIONS(X)               \
    X(taglib_set_strings_unicode)        \
    X(taglib_set_string_management_enabled) \
    X(taglib_file_new)                   \
    X(taglib_file_free)                  \
    X(taglib_file_is_valid)              \
    X(taglib_file_tag)                   \
    X(taglib_file_audioproperties)       \
    X(taglib_tag_title)                  \
    X(taglib_tag_artist)                 \
    X(taglib_tag_album)                  \
    X(taglib_audioproperties_length)     \
    X(taglib_audioproperties_samplerate) \
    X(taglib_free)

static struct {
    PRTAG_FUNCTIONS(PRDL_FIELD)
} table;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static void *library;
static int users;
static char load_error[256];

static int load(void) {
    static const char *const names[] = {PRTAG_FUNCTIONS(PRDL_NAME)};
    if (prdl_open(PRTAG_SONAME, "TagLib", "libtagc0", names, (void **)&table, sizeof names / sizeof *names, &library,
                  load_error, sizeof load_error) != 0)
        return -1;
    // Strings as UTF-8, each freed by its reader: concurrent scans do not free each other's.
    table.taglib_set_strings_unicode(1);
    table.taglib_set_string_management_enabled(0);
    return 0;
}

int prtag_acquire(void) {
    pthread_mutex_lock(&lock);
    int result = 0;
    if (users == 0) result = load();
    if (result == 0) users += 1;
    pthread_mutex_unlock(&lock);
    return result;
}

void prtag_release(void) {
    pthread_mutex_lock(&lock);
    if (users > 0 && --users == 0 && library != NULL) {
        dlclose(library);
        library = NULL;
    }
    pthread_mutex_unlock(&lock);
}

int prtag_users(void) {
    pthread_mutex_lock(&lock);
    int count = users;
    pthread_mutex_unlock(&lock);
    return count;
}

const char *prtag_load_error(void) { return load_error; }

prtag_result prtag_read(const char *path) {
    prtag_result result = {0};
    TagLib_File *file = table.taglib_file_new(path);
    if (file == NULL) {
        result.status = 1;
        return result;
    }
    if (!table.taglib_file_is_valid(file)) {
        result.status = 2;
    } else {
        const TagLib_AudioProperties *properties = table.taglib_file_audioproperties(file);
        if (properties == NULL) {
            result.status = 3;
        } else {
            result.seconds = table.taglib_audioproperties_length(properties);
            result.sample_rate = table.taglib_audioproperties_samplerate(properties);
            TagLib_Tag *tag = table.taglib_file_tag(file);
            if (tag != NULL) {
                result.title = table.taglib_tag_title(tag);
                result.artist = table.taglib_tag_artist(tag);
                result.album = table.taglib_tag_album(tag);
            }
        }
    }
    table.taglib_file_free(file);
    return result;
}

void prtag_free(char *string) {
    if (string != NULL) table.taglib_free(string);
}
