/* SPDX-License-Identifier: Apache-2.0 */
/* The AWS IMDSv2 and Azure IMDS reply parsers: the documented shapes, and every bad reply
 * the metadata service or something in front of it can give (HTML, truncated JSON, huge
 * bodies, addresses outside their subnet, wrong MAC forms). Outputs untouched on failure. */
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

int main(void)
{
        test_macs();
        test_token();
        test_ipv4s();
        test_subnet();
        test_addr_make();
        test_azure();
        return test_done();
}
