/* libmosquitto, the MQTT client library the load tester drives Mosquitto with (Debian: libmosquitto-dev), and
 * epoll, which the tester polls every client's socket with (Swift's Glibc module does not include sys/epoll.h).
 * Swift imports both headers as they are; nothing is wrapped here. */
#include <mosquitto.h>
#include <sys/epoll.h>
