/* SPDX-License-Identifier: Apache-2.0 */
/* The AWS IMDSv2 and Azure IMDS reply parsers: the documented shapes, and every bad reply
 * the metadata service or something in front of it can give (HTML, truncated JSON, huge
 * bodies, addresses outside their subnet, wrong MAC forms), and addresses no NIC can have
 * (the static entries' unicast rule, link-local, absurd prefixes) on both clouds' paths.
 * Outputs untouched on failure. */
#include "imds-parse.h"

#include "cleanup.h"
#include "testutil.h"

#include <errno.h>

static const uint8_t MAC1[6] = {0x00, 0x0d, 0x3a, 0xf8, 0x06, 0xec};

static void test_macs(void)
{
        char b[18];
        const uint8_t m[6] = {0x0a, 0x1b, 0x2c, 0x3d, 0x4e, 0x5f};
        CHECK_STR(imds_aws_mac(m, b), "0a:1b:2c:3d:4e:5f");
        CHECK_STR(imds_azure_mac(m, b), "0A1B2C3D4E5F");
        CHECK_STR(imds_azure_mac(MAC1, b), "000D3AF806EC");
}

static void test_token(void)
{
        char t[IMDS_TOKEN_MAX] = "untouched";
        static const struct {
                const char *body;
                int r;
        } bad[] = {
                {"", -EBADMSG},
                {"\n", -EBADMSG},
                {"two words", -EBADMSG},
                {"tok\nen", -EBADMSG},
                {"tok\r\nX-Injected: 1", -EBADMSG},
                {"<html>", 0}, /* printable: a token as far as the format goes */
        };
        CHECK_INT(imds_aws_token_parse("AQAEAbc_-==\n", 12, t, sizeof(t)), 0);
        CHECK_STR(t, "AQAEAbc_-==");
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                char u[IMDS_TOKEN_MAX] = "untouched";
                CHECK_INT(imds_aws_token_parse(bad[i].body, strlen(bad[i].body), u, sizeof(u)), bad[i].r);
                if (bad[i].r < 0)
                        CHECK_STR(u, "untouched");
        }
        char big[IMDS_TOKEN_MAX + 10];
        memset(big, 'a', sizeof(big));
        CHECK_INT(imds_aws_token_parse(big, sizeof(big), t, sizeof(t)), -E2BIG);
        CHECK_INT(imds_aws_token_parse("abc", 3, t, 3), -E2BIG); /* no room for the NUL */
        const char nul[] = {'a', 0, 'b'};
        CHECK_INT(imds_aws_token_parse(nul, 3, t, sizeof(t)), -EBADMSG);
}

static void test_ipv4s(void)
{
        uint32_t a = 7;
        char err[IMDS_ERR_LEN];

        CHECK_INT(imds_aws_ipv4s_parse("10.0.1.17\n10.0.1.99\n", 20, &a, err, sizeof(err)), 0);
        CHECK_INT(a, 0x0a000111);
        CHECK_INT(imds_aws_ipv4s_parse("10.0.1.17", 9, &a, err, sizeof(err)), 0);
        CHECK_INT(imds_aws_ipv4s_parse("10.0.1.18\r\n", 11, &a, err, sizeof(err)), 0);
        CHECK_INT(a, 0x0a000112);
        a = 7;
        CHECK_INT(imds_aws_ipv4s_parse("", 0, &a, err, sizeof(err)), -ENODATA);
        CHECK(strstr(err, "no private IPv4") != NULL);
        CHECK_INT(imds_aws_ipv4s_parse("\n\n", 2, &a, err, sizeof(err)), -ENODATA);
        const char *html = "<html><body>Service Unavailable</body></html>";
        CHECK_INT(imds_aws_ipv4s_parse(html, strlen(html), &a, err, sizeof(err)), -EBADMSG);
        CHECK(strstr(err, "line 1 is not an IPv4 address: \"<html>") != NULL);
        CHECK_INT(imds_aws_ipv4s_parse("10.0.1.17\ngarbage\x01\n", 19, &a, err, sizeof(err)), -EBADMSG);
        CHECK(strstr(err, "line 2") != NULL && strstr(err, "garbage?") != NULL);
        CHECK_INT(a, 7);
        /* bounded: too many lines, too many bytes */
        static char many[IMDS_MAX_LINES * 10 + 100];
        size_t n = 0;
        for (int i = 0; i <= IMDS_MAX_LINES; i++)
                n += (size_t)snprintf(many + n, sizeof(many) - n, "10.0.0.%d\n", i % 200 + 1);
        CHECK_INT(imds_aws_ipv4s_parse(many, n, &a, err, sizeof(err)), -E2BIG);
        CHECK_INT(imds_aws_ipv4s_parse(many, IMDS_MAX_TEXT + 1, &a, err, sizeof(err)), -E2BIG);
        CHECK_INT(a, 7);
}

static void test_subnet(void)
{
        ipv4_cidr c = {7, 7};
        char err[IMDS_ERR_LEN];
        static const struct {
                const char *body;
                int r;
        } t[] = {
                {"10.0.1.0/24", 0},
                {"10.0.1.0/24\n", 0},
                {"10.0.0.0/16", 0},
                {"10.0.1.5/24", -EBADMSG}, /* host bits: not a subnet */
                {"10.0.1.0/31", -EBADMSG}, /* no gateway to spare */
                {"0.0.0.0/0", -EBADMSG},
                {"10.0.1.0", -EBADMSG},
                {"<html>", -EBADMSG},
                {"10.0.1.0/24\n10.0.2.0/24", -EBADMSG},
                {"", -EBADMSG},
        };
        for (size_t i = 0; i < ELEMENTSOF(t); i++) {
                ipv4_cidr d = {7, 7};
                CHECK_INT(imds_aws_subnet_parse(t[i].body, strlen(t[i].body), &d, err, sizeof(err)), t[i].r);
                if (t[i].r < 0)
                        CHECK(d.addr == 7 && d.prefix_len == 7);
        }
        CHECK_INT(imds_aws_subnet_parse("10.0.1.0/24", 11, &c, err, sizeof(err)), 0);
        CHECK_INT(c.addr, 0x0a000100);
        CHECK_INT(c.prefix_len, 24);
}

static void test_addr_make(void)
{
        imds_addr a = {7, 7, 7};
        char err[IMDS_ERR_LEN];
        ipv4_cidr s = {0x0a000100, 24};

        CHECK_INT(imds_addr_make(0x0a000111, s, &a, err, sizeof(err)), 0);
        CHECK_INT(a.ipv4, 0x0a000111);
        CHECK_INT(a.prefix_len, 24);
        CHECK_INT(a.gateway, 0x0a000101);
        imds_addr b = {7, 7, 7};
        CHECK_INT(imds_addr_make(0x0a090005, s, &b, err, sizeof(err)), -EDOM);
        CHECK_STR(err, "address 10.9.0.5 is not a usable host address of its subnet 10.0.1.0/24");
        CHECK_INT(imds_addr_make(0x0a000101, s, &b, err, sizeof(err)), -EDOM); /* the gateway */
        CHECK_INT(imds_addr_make(0x0a0001ff, s, &b, err, sizeof(err)), -EDOM); /* broadcast */
        CHECK_INT(b.ipv4, 7);
}

static const char *DOC =
        "{\"interface\":[{\"ipv4\":{\"ipAddress\":[{\"privateIpAddress\":\"10.1.0.4\",\"publicIpAddress\":\"X.X.X.X\"}],"
        "\"subnet\":[{\"address\":\"10.1.0.0\",\"prefix\":\"24\"}]},\"ipv6\":{\"ipAddress\":[]},"
        "\"macAddress\":\"000D3AF806EC\"},"
        "{\"ipv4\":{\"ipAddress\":[{\"privateIpAddress\":\"\"},{\"privateIpAddress\":\"10.2.0.9\"}],"
        "\"subnet\":[{\"address\":\"10.2.0.0\",\"prefix\":\"16\"}]},\"macAddress\":\"000d3a000002\"}]}";

static void test_azure(void)
{
        imds_addr a = {7, 7, 7};
        char err[IMDS_ERR_LEN];
        const uint8_t mac2[6] = {0x00, 0x0d, 0x3a, 0x00, 0x00, 0x02}, mac9[6] = {0, 0x0d, 0x3a, 0, 0, 9};

        CHECK_INT(imds_azure_parse(DOC, strlen(DOC), MAC1, &a, err, sizeof(err)), 0);
        CHECK_INT(a.ipv4, 0x0a010004);
        CHECK_INT(a.prefix_len, 24);
        CHECK_INT(a.gateway, 0x0a010001);
        /* lowercase hex is the same MAC; the first non-empty privateIpAddress counts */
        CHECK_INT(imds_azure_parse(DOC, strlen(DOC), mac2, &a, err, sizeof(err)), 0);
        CHECK_INT(a.ipv4, 0x0a020009);
        CHECK_INT(a.prefix_len, 16);
        CHECK_INT(a.gateway, 0x0a020001);

        static const struct {
                const char *doc;
                int r;
                const char *msg;
        } bad[] = {
                {"<html><body>Bad Gateway</body></html>", -EBADMSG, "not JSON"},
                {"{\"interface\": [{\"ipv4\": {\"ipAddress\": [{\"privateIp", -EBADMSG, "not JSON"},
                {"", -EBADMSG, "not JSON"},
                {"[]", -EBADMSG, "no \"interface\" array"},
                {"{\"interface\": {}}", -EBADMSG, "no \"interface\" array"},
                {"{\"interface\": [], \"interface\": []}", -EBADMSG, "not JSON"},
                {"{\"interface\": []}", -ENOENT, "no interface with macAddress 000D3AF806EC among 0"},
                {"{\"interface\": [{\"macAddress\": \"00:0D:3A:F8:06:EC\"}]}", -EBADMSG, "expected 12 hex digits"},
                {"{\"interface\": [{\"macAddress\": 12}]}", -EBADMSG, "got \"(none)\""},
                {"{\"interface\": [{\"macAddress\": \"000D3AF806EC\"}]}", -ENODATA, "no \"ipv4\""},
                {"{\"interface\": [{\"macAddress\": \"000D3AF806EC\", \"ipv4\": {\"ipAddress\": []}}]}", -ENODATA,
                 "no private IPv4"},
                {"{\"interface\": [{\"macAddress\": \"000D3AF806EC\", \"ipv4\": {\"ipAddress\": [{\"privateIpAddress\": "
                 "\"10.1.0.4\"}]}}]}", -ENODATA, "no ipv4.subnet"},
                {"{\"interface\": [{\"macAddress\": \"000D3AF806EC\", \"ipv4\": {\"ipAddress\": [{\"privateIpAddress\": "
                 "\"10.1.0.4\"}], \"subnet\": [{\"address\": \"10.1.0.0\", \"prefix\": \"abc\"}]}}]}", -EBADMSG,
                 "not a usable subnet"},
                {"{\"interface\": [{\"macAddress\": \"000D3AF806EC\", \"ipv4\": {\"ipAddress\": [{\"privateIpAddress\": "
                 "\"10.1.0.4\"}], \"subnet\": [{\"address\": \"10.1.0.0\", \"prefix\": \"240\"}]}}]}", -EBADMSG,
                 "not a usable subnet"},
                {"{\"interface\": [{\"macAddress\": \"000D3AF806EC\", \"ipv4\": {\"ipAddress\": [{\"privateIpAddress\": "
                 "\"10.1.0.4\"}], \"subnet\": [{\"address\": \"10.1.0.7\", \"prefix\": \"24\"}]}}]}", -EBADMSG,
                 "not a usable subnet"},
                {"{\"interface\": [{\"macAddress\": \"000D3AF806EC\", \"ipv4\": {\"ipAddress\": [{\"privateIpAddress\": "
                 "\"10.9.0.4\"}], \"subnet\": [{\"address\": \"10.1.0.0\", \"prefix\": \"24\"}]}}]}", -EDOM,
                 "10.9.0.4 is not a usable host address of its subnet 10.1.0.0/24"},
                {"{\"interface\": [{\"macAddress\": \"000D3AF806EC\", \"ipv4\": {\"ipAddress\": [{\"privateIpAddress\": "
                 "\"10.1.0.999\"}], \"subnet\": [{\"address\": \"10.1.0.0\", \"prefix\": \"24\"}]}}]}", -EBADMSG,
                 "not an IPv4 address: \"10.1.0.999\""},
                {"{\"interface\": [{\"macAddress\": \"000D3AF806EC\", \"ipv4\": {\"ipAddress\": \"10.1.0.4\"}}]}",
                 -EBADMSG, "must be arrays"},
        };
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                imds_addr b = {7, 7, 7};
                err[0] = '\0';
                int r = imds_azure_parse(bad[i].doc, strlen(bad[i].doc), MAC1, &b, err, sizeof(err));
                CHECK_INT(r, bad[i].r);
                if (!strstr(err, bad[i].msg))
                        fprintf(stderr, "case %zu: message \"%s\" lacks \"%s\"\n", i, err, bad[i].msg);
                CHECK(strstr(err, bad[i].msg) != NULL);
                CHECK_INT(b.ipv4, 7);
        }
        /* an integer prefix is accepted too */
        const char *intp = "{\"interface\": [{\"macAddress\": \"000D3AF806EC\", \"ipv4\": {\"ipAddress\": "
                           "[{\"privateIpAddress\": \"10.1.0.4\"}], \"subnet\": [{\"address\": \"10.1.0.0\", \"prefix\": 26}]}}]}";
        CHECK_INT(imds_azure_parse(intp, strlen(intp), MAC1, &a, err, sizeof(err)), 0);
        CHECK_INT(a.prefix_len, 26);
        CHECK_INT(imds_azure_parse(DOC, strlen(DOC), mac9, &a, err, sizeof(err)), -ENOENT);
        CHECK(strstr(err, "000D3A000009 among 2") != NULL);
        /* bounded */
        CHECK_INT(imds_azure_parse(DOC, IMDS_MAX_JSON + 1, MAC1, &a, err, sizeof(err)), -E2BIG);
        static char many[IMDS_MAX_INTERFACES * 40 + 64];
        size_t n = (size_t)snprintf(many, sizeof(many), "{\"interface\":[");
        for (int i = 0; i <= IMDS_MAX_INTERFACES; i++)
                n += (size_t)snprintf(many + n, sizeof(many) - n, "%s{\"macAddress\":\"000D3A0000%02X\"}", i ? "," : "", i);
        n += (size_t)snprintf(many + n, sizeof(many) - n, "]}");
        CHECK_INT(imds_azure_parse(many, n, MAC1, &a, err, sizeof(err)), -E2BIG);
}

/* One metadata answer "a.b.c.d/len" through each cloud's path as the daemon takes it:
 * AWS local-ipv4s + subnet-ipv4-cidr-block (the subnet is the address's network) then
 * imds_addr_make; Azure's network document. The verdict of each (0 or the error). */
static int aws_path(const char *cidr, imds_addr *ret, char *err, size_t err_size)
{
        ipv4_cidr c, subnet;
        char a[IPV4_STR_MAX], sub[IPV4_CIDR_STR_MAX];
        uint32_t first;
        int r;

        CHECK_INT(ipv4_cidr_parse(cidr, strlen(cidr), &c), 0);
        ipv4_format(c.addr, a);
        ipv4_cidr_format((ipv4_cidr){ipv4_network(c), c.prefix_len}, sub);
        if ((r = imds_aws_ipv4s_parse(a, strlen(a), &first, err, err_size)) < 0 ||
            (r = imds_aws_subnet_parse(sub, strlen(sub), &subnet, err, err_size)) < 0)
                return r;
        return imds_addr_make(first, subnet, ret, err, err_size);
}

static int azure_path(const char *cidr, imds_addr *ret, char *err, size_t err_size)
{
        ipv4_cidr c;
        char a[IPV4_STR_MAX], net[IPV4_STR_MAX], doc[512];

        CHECK_INT(ipv4_cidr_parse(cidr, strlen(cidr), &c), 0);
        snprintf(doc, sizeof(doc),
                 "{\"interface\":[{\"ipv4\":{\"ipAddress\":[{\"privateIpAddress\":\"%s\"}],"
                 "\"subnet\":[{\"address\":\"%s\",\"prefix\":\"%u\"}]},\"macAddress\":\"000D3AF806EC\"}]}",
                 ipv4_format(c.addr, a), ipv4_format(ipv4_network(c), net), (unsigned)c.prefix_len);
        return imds_azure_parse(doc, strlen(doc), MAC1, ret, err, err_size);
}

static void test_metadata_unicast(void)
{
        static const struct {
                const char *cidr;
                bool ok;
        } t[] = {
                /* what the review saw go Healthy, refused now on both paths */
                {"127.0.0.5/8", false},        /* loopback */
                {"224.0.0.5/4", false},        /* multicast */
                {"0.0.0.5/8", false},          /* "this network" */
                {"240.0.0.5/4", false},        /* reserved */
                {"169.254.169.254/16", false}, /* link-local: the metadata service's own */
                {"169.254.7.9/24", false},
                {"10.0.0.5/1", false},         /* a /1 subnet (0.0.0.0/1) */
                {"130.0.0.5/1", false},        /* 128.0.0.0/1 */
                {"10.0.0.5/7", false},         /* wider than /8 */
                {"10.0.1.5/30", false},        /* narrower than /29 */
                {"223.255.255.5/24", true},    /* the last unicast /8 */
                {"10.0.1.17/24", true},
                {"172.31.32.5/20", true},      /* an AWS default subnet */
                {"10.2.0.9/16", true},
                {"10.0.0.4/8", true},
                {"192.168.7.10/29", true},     /* Azure's smallest subnet */
                {"100.64.3.3/28", true},       /* AWS's smallest subnet */
        };
        for (size_t i = 0; i < ELEMENTSOF(t); i++) {
                char err[IMDS_ERR_LEN] = "";
                imds_addr a = {7, 7, 7}, b = {7, 7, 7};
                int ra = aws_path(t[i].cidr, &a, err, sizeof(err));
                if ((ra == 0) != t[i].ok)
                        fprintf(stderr, "AWS %s: %d \"%s\"\n", t[i].cidr, ra, err);
                CHECK((ra == 0) == t[i].ok);
                err[0] = '\0';
                int rb = azure_path(t[i].cidr, &b, err, sizeof(err));
                if ((rb == 0) != t[i].ok)
                        fprintf(stderr, "Azure %s: %d \"%s\"\n", t[i].cidr, rb, err);
                CHECK((rb == 0) == t[i].ok);
                if (t[i].ok) {
                        CHECK(a.ipv4 == b.ipv4 && a.prefix_len == b.prefix_len && a.gateway == b.gateway);
                } else {
                        CHECK(ra == -EDOM || ra == -EBADMSG);
                        CHECK(rb == -EDOM || rb == -EBADMSG);
                        CHECK(a.ipv4 == 7 && b.ipv4 == 7 && b.gateway == 7);
                }
        }
        /* the messages say which rule */
        char err[IMDS_ERR_LEN];
        imds_addr a;
        CHECK_INT(imds_addr_make(0x7f000005, (ipv4_cidr){0x7f000000, 8}, &a, err, sizeof(err)), -EDOM);
        CHECK_STR(err, "address 127.0.0.5 of subnet 127.0.0.0/8: \"127.0.0.5/8\" cannot be an interface's address "
                       "(zero, loopback, multicast or reserved)");
        CHECK_INT(imds_addr_make(0xa9fea9fe, (ipv4_cidr){0xa9fe0000, 16}, &a, err, sizeof(err)), -EDOM);
        CHECK_STR(err, "address 169.254.169.254 of subnet 169.254.0.0/16: \"169.254.169.254/16\" is link-local "
                       "(169.254.0.0/16), not a NIC's address");
        CHECK_INT(imds_addr_make(0x0a000005, (ipv4_cidr){0, 1}, &a, err, sizeof(err)), -EDOM);
        CHECK_STR(err, "address 10.0.0.5 of subnet 0.0.0.0/1: \"10.0.0.5/1\": the subnet prefix is outside /8../29");
}

int main(void)
{
        test_macs();
        test_token();
        test_ipv4s();
        test_subnet();
        test_addr_make();
        test_azure();
        test_metadata_unicast();
        return test_done();
}
