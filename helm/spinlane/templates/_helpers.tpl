{{/* SPDX-License-Identifier: Apache-2.0 */}}
{{/* Names, labels, images, the agent's config.json and the checks values.schema.json
     cannot express (each fails the render with a message naming the value). */}}

{{- define "spinlane.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "spinlane.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "spinlane.agentName" -}}
{{- printf "%s-agent" (include "spinlane.fullname" .) | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "spinlane.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
app.kubernetes.io/name: {{ include "spinlane.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: spinlane
{{- end -}}

{{/* The agent pods' selector: name, instance, component. */}}
{{- define "spinlane.agentSelector" -}}
app.kubernetes.io/name: {{ include "spinlane.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: node-agent
{{- end -}}

{{- define "spinlane.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "spinlane.agentName" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- required "serviceAccount.name is required when serviceAccount.create is false" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/* repository:tag or repository@digest; tag defaults to appVersion. Arg: dict img, ctx,
     key (the values key, for the messages; default "image"). Fails on the placeholder
     repository of values.yaml and on a repository that carries a tag. */}}
{{- define "spinlane.image" -}}
{{- $img := .img -}}
{{- $key := .key | default "image" -}}
{{- include "spinlane.checkRepository" (dict "repo" $img.repository "key" (printf "%s.repository" $key)) -}}
{{- if $img.digest -}}
{{- printf "%s@%s" $img.repository $img.digest -}}
{{- else -}}
{{- printf "%s:%s" $img.repository (default .ctx.Chart.AppVersion $img.tag) -}}
{{- end -}}
{{- end -}}

{{/* Fails unless repo is a real repository without a tag. Arg: dict repo, key. */}}
{{- define "spinlane.checkRepository" -}}
{{- if hasPrefix "registry.example.com/" .repo -}}
{{- fail (printf "%s is the placeholder %s: push the image to your registry and set --set %s=<registry>/..." .key .repo .key) -}}
{{- end -}}
{{- if contains ":" (last (splitList "/" .repo)) -}}
{{- fail (printf "%s %s carries a tag (a ':' after the last '/'): give the repository only and the tag in %s.tag (or a digest in %s.digest)" .key .repo (trimSuffix ".repository" .key) (trimSuffix ".repository" .key)) -}}
{{- end -}}
{{- end -}}

{{/* config.json from a config map (an empty cores.cpus is left out: the whole isolated
     set). Arg: the config dict. */}}
{{- define "spinlane.configJson" -}}
{{- $c := deepCopy . -}}
{{- if and (hasKey $c "cores") (not $c.cores.cpus) -}}
{{- $_ := unset $c "cores" -}}
{{- end -}}
{{- toPrettyJson $c -}}
{{- end -}}

{{/* The keys the agent applies only at its next start (agent/cmd-run.c settings_check:
     resource_prefix, hugetlbfs.mount_point / pod_mount, cdi, cores). Their hash goes in a
     pod annotation so that changing one of them rolls the pods; every other key is
     re-read live from the ConfigMap and must not roll the DaemonSet. */}}
{{- define "spinlane.restartHash" -}}
{{- $c := . -}}
{{- $pick := dict "resource_prefix" $c.resource_prefix "mount_point" $c.hugetlbfs.mount_point "pod_mount" $c.hugetlbfs.pod_mount "cdi" $c.cdi "cores" (($c.cores).cpus | default "") -}}
{{- toJson $pick | sha256sum | trunc 16 -}}
{{- end -}}

{{/* Checks of one config that a JSON schema cannot say. Arg: dict name, cfg, ctx. */}}
{{- define "spinlane.checkConfig" -}}
{{- $c := .cfg -}}
{{- $where := .name -}}
{{- $preset := .ctx.Values.preset -}}
{{- $n := $c.nics -}}
{{- if eq $preset "eks" -}}
{{- if not (or $n.ids $n.pci $n.interfaces (gt (int $n.max) 0)) -}}
{{- fail (printf "%s: preset eks needs an explicit NIC selection: set nics.interfaces (e.g. [ens6]), nics.pci or nics.max, so that only the ENIs you created for DPDK (tagged node.k8s.amazonaws.com/no_manage=true) are taken" $where) -}}
{{- end -}}
{{- if or (has "mana" $n.kinds) (has "other" $n.kinds) (not (has "ena" $n.kinds)) -}}
{{- fail (printf "%s: preset eks takes ENA NICs only: nics.kinds must be [ena], got %v" $where $n.kinds) -}}
{{- end -}}
{{- end -}}
{{- if eq $preset "aks" -}}
{{- if or (has "ena" $n.kinds) (has "other" $n.kinds) (not (has "mana" $n.kinds)) -}}
{{- fail (printf "%s: preset aks takes MANA NICs only: nics.kinds must be [mana], got %v" $where $n.kinds) -}}
{{- end -}}
{{- end -}}
{{- /* hugetlbfs.page_size must be one of the reserved sizes, else the pods get an empty pool */ -}}
{{- $sizes := list -}}
{{- range $c.hugepages -}}
{{- $sizes = append $sizes (toString .page_size) -}}
{{- end -}}
{{- if and $sizes $c.hugetlbfs.page_size (not (has (toString $c.hugetlbfs.page_size) $sizes)) -}}
{{- fail (printf "%s: hugetlbfs.page_size %v is none of the reserved hugepages sizes %v" $where $c.hugetlbfs.page_size $sizes) -}}
{{- end -}}
{{- $seen := dict -}}
{{- range $c.hugepages -}}
{{- $k := toString .page_size -}}
{{- if hasKey $seen $k -}}
{{- fail (printf "%s: hugepages lists page size %s twice" $where $k) -}}
{{- end -}}
{{- $_ := set $seen $k true -}}
{{- end -}}
{{- end -}}

{{/* The container securityContext of a driver (spinlane-launch) container, by NIC kind:
     only the capabilities that kind needs. */}}
{{- define "spinlane.driverSecurityContext" -}}
{{- $kind := . -}}
allowPrivilegeEscalation: false
capabilities:
  drop: ["ALL"]
  {{- if eq $kind "mana" }}
  # MANA (AKS): IPC_LOCK - DPDK locks its hugepage memory (mlock) and ibverbs pins the
  # buffers it registers with the NIC; NET_RAW - the raw-packet queue pairs of net_mana
  # (ibv_create_qp of IBV_QPT_RAW_PACKET needs it). The uverbs device comes from the
  # device plugin.
  add: ["IPC_LOCK", "NET_RAW"]
  {{- else }}
  # ENA on vfio-pci no-IOMMU (EKS, non-metal): IPC_LOCK - VFIO and DPDK lock the DMA
  # memory; SYS_RAWIO - the kernel refuses to open a no-IOMMU vfio group without it;
  # SYS_ADMIN - without an IOMMU DPDK uses IOVA as PA and reads physical addresses from
  # /proc/self/pagemap, which the kernel zeroes for processes without CAP_SYS_ADMIN.
  add: ["IPC_LOCK", "SYS_RAWIO", "SYS_ADMIN"]
  {{- end }}
{{- end -}}

{{/* The NIC kind the driver pods are for: from the preset, else the first kind. */}}
{{- define "spinlane.driverKind" -}}
{{- if eq .Values.preset "aks" -}}mana{{- else if eq .Values.preset "eks" -}}ena{{- else -}}{{ first .Values.config.nics.kinds }}{{- end -}}
{{- end -}}

{{/* A spinlane-launch container's resources: Guaranteed QoS (requests = limits, integer
     CPUs), hugepages-2Mi and the spinlane resources the device plugin serves; those
     served through DRA (resourceApi) come from the pod's claim "spinlane" instead
     (spinlane.podClaims). Arg: dict ctx, cpu, memory, cores, hugepages, nics. */}}
{{- define "spinlane.driverResources" -}}
{{- $p := .ctx.Values.config.resource_prefix -}}
{{- $dra := include "spinlane.draResources" .ctx | splitList "," -}}
{{- range $k := list "requests" "limits" }}
{{ $k }}:
  cpu: {{ $.cpu | quote }}
  memory: {{ $.memory | quote }}
  hugepages-2Mi: {{ $.hugepages | quote }}
  {{- if not (has "core" $dra) }}
  {{ $p }}/isolated-core: {{ $.cores | quote }}
  {{- end }}
  {{- if not (has "nic" $dra) }}
  {{ $p }}/dpdk-nic: {{ $.nics | quote }}
  {{- end }}
{{- end }}
{{- if include "spinlane.draResources" .ctx }}
# the devices of the pod's ResourceClaim "spinlane" (every request in it): the CDI spec
# the agent writes for the claim gives this container their device nodes and SPINLANE_*
claims:
- name: spinlane
{{- end }}
{{- end -}}

{{/* The resources served through DRA, as the agent's --dra-resources takes them: "" (mode
     device-plugin), "nic,core" (dra), or resourceApi.draResources (both) in that order.
     Fails on a mode or list the schema would refuse (a render with the schema skipped)
     and on a list that leaves the device plugin nothing (that is mode dra). */}}
{{- define "spinlane.draResources" -}}
{{- $r := .Values.resourceApi -}}
{{- $mode := toString $r.mode -}}
{{- if eq $mode "device-plugin" -}}
{{- else if eq $mode "dra" -}}
nic,core
{{- else if eq $mode "both" -}}
{{- $l := $r.draResources | default list -}}
{{- range $l -}}
{{- if not (has (toString .) (list "nic" "core")) -}}
{{- fail (printf "resourceApi.draResources: %q is not a resource spinlane serves through DRA (nic or core)" (toString .)) -}}
{{- end -}}
{{- end -}}
{{- if not $l -}}
{{- fail "resourceApi.mode both needs resourceApi.draResources to name the resources served through DRA: [nic] or [core]" -}}
{{- end -}}
{{- if and (has "nic" $l) (has "core" $l) -}}
{{- fail "resourceApi.mode both with draResources [nic, core] leaves the device plugin nothing to serve: use resourceApi.mode dra" -}}
{{- end -}}
{{- if has "nic" $l -}}nic{{- else -}}core{{- end -}}
{{- else -}}
{{- fail (printf "resourceApi.mode %q is none of device-plugin, dra, both" $mode) -}}
{{- end -}}
{{- end -}}

{{/* Checks of resourceApi beyond its list: DRA needs resource.k8s.io/v1 (Kubernetes
     1.34+; `helm template` checks the --kube-version it is given). */}}
{{- define "spinlane.checkResourceApi" -}}
{{- if include "spinlane.draResources" . -}}
{{- if semverCompare "<1.34.0-0" .Capabilities.KubeVersion.Version -}}
{{- fail (printf "resourceApi.mode %s needs Kubernetes 1.34 or later (resource.k8s.io/v1, DRA GA); this cluster is %s: keep resourceApi.mode device-plugin" .Values.resourceApi.mode .Capabilities.KubeVersion.Version) -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* A driver pod's claim (resourceApi dra/both): "spinlane", made per pod from the
     ResourceClaimTemplate named. Arg: dict ctx, template. */}}
{{- define "spinlane.podClaims" -}}
{{- if include "spinlane.draResources" .ctx }}
resourceClaims:
- name: spinlane
  resourceClaimTemplateName: {{ .template }}
{{- end }}
{{- end -}}

{{/* A ResourceClaimTemplate's spec for a driver pod: the NIC and the cores served through
     DRA (the classes of templates/dra.yaml), and with both, one NUMA node for all of them
     (matchAttribute over every request: the devices' resource.kubernetes.io/numaNode,
     Kubernetes' standard attribute, must be equal, so another driver's devices can join).
     Arg: dict ctx, cores, nics. */}}
{{- define "spinlane.claimSpec" -}}
{{- $dra := include "spinlane.draResources" .ctx | splitList "," -}}
spec:
  devices:
    requests:
    {{- if has "nic" $dra }}
    - name: nic
      exactly:
        deviceClassName: dpdk-nic.spinlane.io
        allocationMode: ExactCount
        count: {{ .nics }}
    {{- end }}
    {{- if has "core" $dra }}
    - name: cores
      exactly:
        deviceClassName: isolated-core.spinlane.io
        allocationMode: ExactCount
        count: {{ .cores }}
    {{- end }}
    {{- if and (has "nic" $dra) (has "core" $dra) }}
    constraints:
    # the NIC and the cores on one NUMA node (no requests list: every request)
    - matchAttribute: resource.kubernetes.io/numaNode
    {{- end }}
{{- end -}}

{{/* The hugepages of a driver container. hugetlbfs.pod_mount false (the default): the
     pod brings its own emptyDir of medium HugePages-2Mi, private to it. true: the device
     plugin mounts the node's shared hugetlbfs and sets SPINLANE_HUGEPAGE_DIR, so nothing
     here. Arg: ctx; "mount" or "volume". */}}
{{- define "spinlane.driverHugepagesMount" -}}
{{- if not .Values.config.hugetlbfs.pod_mount }}
- name: hugepages
  mountPath: /dev/hugepages
{{- end }}
{{- end -}}
{{- define "spinlane.driverHugepagesVolume" -}}
{{- if not .Values.config.hugetlbfs.pod_mount }}
- name: hugepages
  emptyDir:
    medium: HugePages-2Mi
{{- end }}
{{- end -}}

{{/* config.kernel_args.manage only: what writing (run) and taking back (restore) the
     kernel arguments needs of the host, mounted under /host where the agent's --root
     looks. The agent reads /host/etc/os-release to pick the boot loader, writes the grub
     drop-in /etc/default/grub.d/99-spinlane.cfg, runs update-grub or grubby, and sets or
     removes the reboot sentinel /var/run/reboot-required (kured's). The tool runs
     chrooted in /host when /host/proc is the host's procfs, so it sees the host's /usr,
     /etc and /boot here, /host/dev, /host/proc and /host/sys, and the merged-/usr links
     /host/bin, /host/sbin, /host/lib, /host/lib64 the agent image ships.
     Arg: "mount" or "volume". */}}
{{- define "spinlane.kargsMounts" -}}
# kernel_args.manage: /etc of the host, read only: os-release (which boot loader),
# /etc/default/grub and /etc/grub.d (read by update-grub's grub-mkconfig)
- name: host-etc
  mountPath: /host/etc
  readOnly: true
# kernel_args.manage: /etc/default of the host, written: the drop-in
# grub.d/99-spinlane.cfg (update-grub; restore removes it), and default/grub for a grubby
# that keeps GRUB_CMDLINE_LINUX in step with the boot entries
- name: host-etc-default
  mountPath: /host/etc/default
# kernel_args.manage: /boot of the host, written by the tool (grub.cfg, BLS entries)
- name: host-boot
  mountPath: /host/boot
# kernel_args.manage: /usr of the host, read only: update-grub or grubby and all they
# run (shell, grub-mkconfig, libraries), run chrooted in /host
- name: host-usr
  mountPath: /host/usr
  readOnly: true
# kernel_args.manage: /var/run (/run) of the host, written: the reboot sentinel
# reboot-required that kured watches
- name: host-run
  mountPath: /host/var/run
{{- end -}}
{{- define "spinlane.kargsVolumes" -}}
- name: host-etc
  hostPath:
    path: /etc
    type: Directory
- name: host-etc-default
  hostPath:
    path: /etc/default
    type: Directory
- name: host-boot
  hostPath:
    path: /boot
    type: Directory
- name: host-usr
  hostPath:
    path: /usr
    type: Directory
- name: host-run
  hostPath:
    path: /var/run
    type: Directory
{{- end -}}

{{/* MANA (driverKind mana) only: the host's /sys/devices, read only, at /sys/devices in a
     driver container. DPDK's net_mana finds its port's MAC by reading
     <ibdev>/device/net/<if>/dev_port and address, under the VF's PCI device in
     /sys/devices; sysfs lists a device's netdevs only in the network namespace that holds
     them, so in the pod's own netns that net/ directory is empty and DPDK finds no port.
     The host's /sys/devices shows the host's view (the VF's netdev stays in the host's
     netns); /sys/class/infiniband and /sys/class/infiniband_verbs link into it. Not the
     whole /sys: that would replace the container's own cgroup mounts under /sys/fs/cgroup
     with the host's tree (spinlane-launch's cpu-quota check, and anything reading the
     container's limits, would read the host's). Read only: DPDK only reads it. Not
     hostNetwork: the pod keeps its own network namespace (docs/install-aks.md says why).
     Arg: the driver kind. */}}
{{- define "spinlane.driverSysMount" -}}
{{- if eq . "mana" }}
# MANA: the host's /sys/devices, read only: net_mana reads the VF's net/<if>/address
# and dev_port there, which the pod's own network namespace does not list
- name: host-sys-devices
  mountPath: /sys/devices
  readOnly: true
{{- end }}
{{- end -}}
{{- define "spinlane.driverSysVolume" -}}
{{- if eq . "mana" }}
- name: host-sys-devices
  hostPath:
    path: /sys/devices
    type: Directory
{{- end }}
{{- end -}}
