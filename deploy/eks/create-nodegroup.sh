#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The aws CLI equivalent of `eksctl create nodegroup -f deploy/eks/cluster.yaml`: the
# launch template from launch-template.json with user-data.mime as its user data, then
# the managed node group. Set the variables below; run from the source tree's root.
set -euo pipefail
CLUSTER=${CLUSTER:-my-cluster}
REGION=${REGION:-us-east-1}
SUBNETS=${SUBNETS:?private subnet ids, space separated}
NODE_ROLE_ARN=${NODE_ROLE_ARN:?the node IAM role (with ec2:CreateTags on network-interface)}

lt=$(mktemp)
jq --arg ud "$(base64 -w0 deploy/eks/user-data.mime)" '.UserData = $ud' deploy/eks/launch-template.json >"$lt"
LT_ID=$(aws ec2 create-launch-template --region "$REGION" --launch-template-name "$CLUSTER-spinlane" \
  --launch-template-data "file://$lt" --query LaunchTemplate.LaunchTemplateId --output text)
rm -f "$lt"

# shellcheck disable=SC2086
aws eks create-nodegroup --region "$REGION" --cluster-name "$CLUSTER" --nodegroup-name spinlane \
  --subnets $SUBNETS --node-role "$NODE_ROLE_ARN" \
  --launch-template "id=$LT_ID,version=1" \
  --scaling-config minSize=1,maxSize=4,desiredSize=2 \
  --update-config maxUnavailable=1 \
  --labels spinlane.io/node-pool=true \
  --taints key=spinlane.io/dedicated,value=true,effect=NO_SCHEDULE
aws eks wait nodegroup-active --region "$REGION" --cluster-name "$CLUSTER" --nodegroup-name spinlane
