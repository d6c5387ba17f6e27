/* libmosquitto, the MQTT client library the load tester drives Mosquitto with, loaded at run time (dlopen of
 * libmosquitto.so.1, Debian's libmosquitto1) rather than linked: building Cairn, the hub or the tester, needs no
 * MQTT library, and only a run with `--server mosquitto` needs it installed. The declarations are the few the tester
 * uses, as libmosquitto 2.x's mosquitto.h gives them (its ABI, soname 1); each call goes through a function pointer
 * filled by cairn_mosquitto_load(). Static inline, so no symbol here can interpose on the library's own.
 * Also epoll, which the tester polls every client's socket with (Swift's Glibc module lacks sys/epoll.h). */
#ifndef CAIRN_CMOSQUITTO_H
#define CAIRN_CMOSQUITTO_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/epoll.h>

struct mosquitto;
typedef struct mqtt5__property mosquitto_property;

struct mosquitto_message {
    int mid;
    char *topic;
    void *payload;
    int payloadlen;
    int qos;
    bool retain;
};

enum mosq_err_t { MOSQ_ERR_AUTH_CONTINUE = -4, MOSQ_ERR_SUCCESS = 0, MOSQ_ERR_NOT_SUPPORTED = 10 };
enum mosq_opt_t { MOSQ_OPT_PROTOCOL_VERSION = 1, MOSQ_OPT_TCP_NODELAY = 11 };
static const int MQTT_PROTOCOL_V311 = 4;

/* The library's entry points, NULL until loaded. */
struct cairn_mosquitto_api {
    int (*lib_init)(void);
    int (*lib_cleanup)(void);
    struct mosquitto *(*new_)(const char *, bool, void *);
    void (*destroy)(struct mosquitto *);
    int (*int_option)(struct mosquitto *, enum mosq_opt_t, int);
    void (*connect_callback_set)(struct mosquitto *, void (*)(struct mosquitto *, void *, int));
    void (*subscribe_callback_set)(struct mosquitto *, void (*)(struct mosquitto *, void *, int, int, const int *));
    void (*message_callback_set)(struct mosquitto *,
                                 void (*)(struct mosquitto *, void *, const struct mosquitto_message *));
    int (*connect_bind)(struct mosquitto *, const char *, int, int, const char *);
    int (*publish)(struct mosquitto *, int *, const char *, int, const void *, int, bool);
    int (*subscribe_multiple)(struct mosquitto *, int *, int, char *const *const, int, int,
                              const mosquitto_property *);
    int (*loop_read)(struct mosquitto *, int);
    int (*loop_write)(struct mosquitto *, int);
    int (*loop_misc)(struct mosquitto *);
    int (*socket)(struct mosquitto *);
    bool (*want_write)(struct mosquitto *);
};
extern struct cairn_mosquitto_api cairn_mosquitto;

/* Loads libmosquitto.so.1 once and fills cairn_mosquitto. Returns NULL on success, or dlerror()'s message. */
const char *cairn_mosquitto_load(void);

/* mosquitto_new without the socket pair libmosquitto 2.x opens beside every client (see the .c file): one
 * descriptor per connected client instead of three. NULL where mosquitto_new fails; *paired (if given) says whether
 * the pair was made after all. Not for threaded callers. */
struct mosquitto *cairn_mosquitto_new_unpaired(const char *id, bool clean_session, void *obj, bool *paired);

/* The lowest descriptor number not in use, which the next socket() or open() would take; -1 where none is free. */
int cairn_lowest_free_descriptor(void);

static inline int mosquitto_lib_init(void) {
    if (cairn_mosquitto_load() != NULL) return MOSQ_ERR_NOT_SUPPORTED;
    return cairn_mosquitto.lib_init();
}
static inline int mosquitto_lib_cleanup(void) {
    return cairn_mosquitto.lib_cleanup ? cairn_mosquitto.lib_cleanup() : MOSQ_ERR_SUCCESS;
}
static inline struct mosquitto *mosquitto_new(const char *id, bool clean_session, void *obj) {
    return cairn_mosquitto.new_(id, clean_session, obj);
}
static inline void mosquitto_destroy(struct mosquitto *m) { cairn_mosquitto.destroy(m); }
static inline int mosquitto_int_option(struct mosquitto *m, enum mosq_opt_t option, int value) {
    return cairn_mosquitto.int_option(m, option, value);
}
static inline void mosquitto_connect_callback_set(struct mosquitto *m, void (*f)(struct mosquitto *, void *, int)) {
    cairn_mosquitto.connect_callback_set(m, f);
}
static inline void mosquitto_subscribe_callback_set(struct mosquitto *m,
                                                    void (*f)(struct mosquitto *, void *, int, int, const int *)) {
    cairn_mosquitto.subscribe_callback_set(m, f);
}
static inline void mosquitto_message_callback_set(
    struct mosquitto *m, void (*f)(struct mosquitto *, void *, const struct mosquitto_message *)) {
    cairn_mosquitto.message_callback_set(m, f);
}
static inline int mosquitto_connect_bind(struct mosquitto *m, const char *host, int port, int keepalive,
                                         const char *bind_address) {
    return cairn_mosquitto.connect_bind(m, host, port, keepalive, bind_address);
}
static inline int mosquitto_publish(struct mosquitto *m, int *mid, const char *topic, int length,
                                    const void *payload, int qos, bool retain) {
    return cairn_mosquitto.publish(m, mid, topic, length, payload, qos, retain);
}
static inline int mosquitto_subscribe_multiple(struct mosquitto *m, int *mid, int count, char *const *const topics,
                                               int qos, int options, const mosquitto_property *properties) {
    return cairn_mosquitto.subscribe_multiple(m, mid, count, topics, qos, options, properties);
}
static inline int mosquitto_loop_read(struct mosquitto *m, int max_packets) {
    return cairn_mosquitto.loop_read(m, max_packets);
}
static inline int mosquitto_loop_write(struct mosquitto *m, int max_packets) {
    return cairn_mosquitto.loop_write(m, max_packets);
}
static inline int mosquitto_loop_misc(struct mosquitto *m) { return cairn_mosquitto.loop_misc(m); }
static inline int mosquitto_socket(struct mosquitto *m) { return cairn_mosquitto.socket(m); }
static inline bool mosquitto_want_write(struct mosquitto *m) { return cairn_mosquitto.want_write(m); }

#endif
