/* Finds libmosquitto at run time (see CMosquitto.h for why it is not linked) and fills the function table. */
#include "CMosquitto.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/resource.h>
#include <unistd.h>

struct cairn_mosquitto_api cairn_mosquitto;

static const char *load_error = "libmosquitto not loaded";
static pthread_once_t once = PTHREAD_ONCE_INIT;

#define RESOLVE(field, symbol)                                              \
    do {                                                                    \
        *(void **)(&cairn_mosquitto.field) = dlsym(handle, symbol);         \
        if (cairn_mosquitto.field == NULL) {                                \
            load_error = "libmosquitto.so.1 lacks " symbol;                 \
            return;                                                         \
        }                                                                   \
    } while (0)

static void load(void) {
    void *handle = dlopen("libmosquitto.so.1", RTLD_NOW | RTLD_LOCAL);
    if (handle == NULL) {
        load_error = "libmosquitto.so.1 not found: install libmosquitto1 (Debian) to drive Mosquitto";
        return;
    }
    RESOLVE(lib_init, "mosquitto_lib_init");
    RESOLVE(lib_cleanup, "mosquitto_lib_cleanup");
    RESOLVE(new_, "mosquitto_new");
    RESOLVE(destroy, "mosquitto_destroy");
    RESOLVE(int_option, "mosquitto_int_option");
    RESOLVE(connect_callback_set, "mosquitto_connect_callback_set");
    RESOLVE(subscribe_callback_set, "mosquitto_subscribe_callback_set");
    RESOLVE(message_callback_set, "mosquitto_message_callback_set");
    RESOLVE(connect_bind, "mosquitto_connect_bind");
    RESOLVE(publish, "mosquitto_publish");
    RESOLVE(subscribe_multiple, "mosquitto_subscribe_multiple");
    RESOLVE(loop_read, "mosquitto_loop_read");
    RESOLVE(loop_write, "mosquitto_loop_write");
    RESOLVE(loop_misc, "mosquitto_loop_misc");
    RESOLVE(socket, "mosquitto_socket");
    RESOLVE(want_write, "mosquitto_want_write");
    load_error = NULL;
}

const char *cairn_mosquitto_load(void) {
    pthread_once(&once, load);
    return load_error;
}

int cairn_lowest_free_descriptor(void) {
    /* open() takes the lowest free number; it is given back at once. */
    int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) close(fd);
    return fd;
}

/* libmosquitto 2.x opens a socket pair in mosquitto_new. Only its own mosquitto_loop() reads it, to wake from
 * select() when another thread publishes; a client driven through loop_read, _write and _misc from one thread, as
 * the tester's are, never needs it, yet each simulated user would cost three descriptors and 10,000 users more than
 * a hard limit of 20,000. libmosquitto treats a failed socketpair() as a warning and goes on without it (publish
 * then skips the wake-up write). So while the client is made, the soft descriptor limit is lowered to the lowest
 * free number, where socketpair() fails with EMFILE, and put back at once. Another thread opening a descriptor in
 * that moment would fail too: the tester makes its clients from its one thread. */
struct mosquitto *cairn_mosquitto_new_unpaired(const char *id, bool clean_session, void *obj, bool *paired) {
    struct rlimit saved, lowered;
    int lowest = cairn_lowest_free_descriptor();
    bool limited = lowest >= 0 && getrlimit(RLIMIT_NOFILE, &saved) == 0;
    if (limited) {
        lowered = saved;
        lowered.rlim_cur = (rlim_t)lowest;
        limited = setrlimit(RLIMIT_NOFILE, &lowered) == 0;
    }
    struct mosquitto *client = cairn_mosquitto.new_(id, clean_session, obj);
    if (limited) setrlimit(RLIMIT_NOFILE, &saved); /* raising a soft limit back to where it was cannot fail */
    /* Whether the pair was made after all (the limit could not be lowered, or libmosquitto changed its ways). */
    if (paired != NULL) *paired = client != NULL && cairn_lowest_free_descriptor() != lowest;
    return client;
}
