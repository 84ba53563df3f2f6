/* SPDX-License-Identifier: Apache-2.0 */
/* An empty stand-in for libaeron.so / libaeron_driver.so: the fake aeronmd links it so
 * that its DT_NEEDED and DT_RUNPATH look like the shared-library aeronmd's. */
int fake_aeron_lib_marker(void);
int fake_aeron_lib_marker(void)
{
        return 1;
}
