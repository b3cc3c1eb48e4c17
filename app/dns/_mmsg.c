/*
 * Batched UDP I/O for the DNS server: many datagrams per system call.
 *
 * Why C: on virtual machines a system call costs more than answering a
 * cached query, and Python's socket module has no recvmmsg/sendmmsg. This
 * module only moves bytes; every DNS decision stays in Python. It is
 * optional: app.dns.datagrams falls back to one recvfrom/sendto per
 * datagram where it is not built.
 *
 *   receive(fd, count) -> list[tuple[bytes, tuple[str, int], bytes]]
 *       Up to `count` waiting datagrams as (data, (host, port), sockaddr),
 *       without blocking; [] when none wait. Datagrams cut short by the
 *       buffer are dropped, as no well-formed DNS query needs 64 KiB.
 *   send(fd, replies: list[tuple[bytes, bytes]]) -> int
 *       Sends each (data, sockaddr) without blocking and returns how many
 *       went out. A datagram the kernel refuses (a gone client, a full
 *       buffer) is skipped, never retried: DNS clients retry themselves.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>

#define MAX_BATCH 64
#define BUFFER_SIZE 65536

static char *buffers;  /* MAX_BATCH x BUFFER_SIZE, allocated on first use */
static struct mmsghdr messages[MAX_BATCH];
static struct iovec vectors[MAX_BATCH];
static struct sockaddr_storage peers[MAX_BATCH];

static PyObject *
peer_tuple(const struct sockaddr_storage *peer)
{
    char host[INET6_ADDRSTRLEN];
    int port;
    if (peer->ss_family == AF_INET) {
        const struct sockaddr_in *v4 = (const struct sockaddr_in *)peer;
        inet_ntop(AF_INET, &v4->sin_addr, host, sizeof host);
        port = ntohs(v4->sin_port);
    } else if (peer->ss_family == AF_INET6) {
        const struct sockaddr_in6 *v6 = (const struct sockaddr_in6 *)peer;
        inet_ntop(AF_INET6, &v6->sin6_addr, host, sizeof host);
        port = ntohs(v6->sin6_port);
    } else {
        Py_RETURN_NONE;
    }
    return Py_BuildValue("(si)", host, port);
}

static PyObject *
mmsg_receive(PyObject *module, PyObject *args)
{
    int fd, count, received;
    if (!PyArg_ParseTuple(args, "ii:receive", &fd, &count))
        return NULL;
    if (count < 1 || count > MAX_BATCH) {
        PyErr_Format(PyExc_ValueError, "count must be 1 to %d", MAX_BATCH);
        return NULL;
    }
    if (buffers == NULL && (buffers = PyMem_RawMalloc(MAX_BATCH * BUFFER_SIZE)) == NULL)
        return PyErr_NoMemory();
    for (int i = 0; i < count; i++) {
        vectors[i].iov_base = buffers + (size_t)i * BUFFER_SIZE;
        vectors[i].iov_len = BUFFER_SIZE;
        memset(&messages[i].msg_hdr, 0, sizeof messages[i].msg_hdr);
        messages[i].msg_hdr.msg_iov = &vectors[i];
        messages[i].msg_hdr.msg_iovlen = 1;
        messages[i].msg_hdr.msg_name = &peers[i];
        messages[i].msg_hdr.msg_namelen = sizeof peers[i];
    }
    Py_BEGIN_ALLOW_THREADS
    received = recvmmsg(fd, messages, (unsigned int)count, MSG_DONTWAIT, NULL);
    Py_END_ALLOW_THREADS
    if (received < 0) {
        if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
            return PyList_New(0);
        return PyErr_SetFromErrno(PyExc_OSError);
    }
    PyObject *batch = PyList_New(0);
    if (batch == NULL)
        return NULL;
    for (int i = 0; i < received; i++) {
        struct msghdr *header = &messages[i].msg_hdr;
        if (header->msg_flags & MSG_TRUNC)
            continue;
        PyObject *peer = peer_tuple(&peers[i]);
        if (peer == NULL) {
            Py_DECREF(batch);
            return NULL;
        }
        if (peer == Py_None) {
            Py_DECREF(peer);
            continue;
        }
        PyObject *item = Py_BuildValue(
            "(y#Ny#)", vectors[i].iov_base, (Py_ssize_t)messages[i].msg_len, peer,
            (const char *)&peers[i], (Py_ssize_t)header->msg_namelen);
        if (item == NULL || PyList_Append(batch, item) < 0) {
            Py_XDECREF(item);
            Py_DECREF(batch);
            return NULL;
        }
        Py_DECREF(item);
    }
    return batch;
}

static PyObject *
mmsg_send(PyObject *module, PyObject *args)
{
    int fd;
    PyObject *replies;
    if (!PyArg_ParseTuple(args, "iO!:send", &fd, &PyList_Type, &replies))
        return NULL;
    Py_ssize_t total = PyList_GET_SIZE(replies), sent = 0;
    for (Py_ssize_t start = 0; start < total; start += MAX_BATCH) {
        int count = (int)(total - start < MAX_BATCH ? total - start : MAX_BATCH);
        for (int i = 0; i < count; i++) {
            PyObject *item = PyList_GET_ITEM(replies, start + i);
            const char *data, *name;
            Py_ssize_t data_len, name_len;
            if (!PyArg_ParseTuple(item, "y#y#:send", &data, &data_len, &name, &name_len))
                return NULL;
            if (name_len > (Py_ssize_t)sizeof(struct sockaddr_storage)) {
                PyErr_SetString(PyExc_ValueError, "sockaddr too long");
                return NULL;
            }
            /* The bytes objects stay alive in `replies` while we send. */
            vectors[i].iov_base = (void *)data;
            vectors[i].iov_len = (size_t)data_len;
            memset(&messages[i].msg_hdr, 0, sizeof messages[i].msg_hdr);
            messages[i].msg_hdr.msg_iov = &vectors[i];
            messages[i].msg_hdr.msg_iovlen = 1;
            messages[i].msg_hdr.msg_name = (void *)name;
            messages[i].msg_hdr.msg_namelen = (socklen_t)name_len;
        }
        int at = 0;
        while (at < count) {
            int done;
            Py_BEGIN_ALLOW_THREADS
            done = sendmmsg(fd, messages + at, (unsigned int)(count - at), MSG_DONTWAIT);
            Py_END_ALLOW_THREADS
            if (done > 0) {
                at += done;
                sent += done;
            } else if (done < 0 && errno == EINTR) {
                continue;
            } else {
                at += 1; /* this one was refused: skip it, send the rest */
            }
        }
    }
    return PyLong_FromSsize_t(sent);
}

static PyMethodDef methods[] = {
    {"receive", mmsg_receive, METH_VARARGS,
     "Up to count waiting datagrams as (data, (host, port), sockaddr)."},
    {"send", mmsg_send, METH_VARARGS, "Send (data, sockaddr) pairs; returns how many went."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef definition = {
    PyModuleDef_HEAD_INIT, "_mmsg", "recvmmsg/sendmmsg for the DNS server.", -1, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC
PyInit__mmsg(void)
{
    PyObject *module = PyModule_Create(&definition);
    if (module != NULL && PyModule_AddIntConstant(module, "MAX_BATCH", MAX_BATCH) < 0) {
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
