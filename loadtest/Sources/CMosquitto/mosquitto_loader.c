/* Finds libmosquitto at run time (see CMosquitto.h for why it is not linked) and fills the function table. */
#include "CMosquitto.h"

#include <dlfcn.h>
#include <pthread.h>

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
