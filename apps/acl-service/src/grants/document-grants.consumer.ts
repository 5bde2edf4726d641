import { type Caller, parseGrantPrincipal } from '@kb/auth';
import { type DocumentEvent, Topics, toTenantId } from '@kb/contracts';
import { consumerLog, EventConsumer } from '@kb/kafka';
import { Inject, Injectable } from '@nestjs/common';
import type { Kafka } from 'kafkajs';

import { ACL_CONFIG, type AclConfig } from '../config/acl.config';
import { KAFKA } from '../platform/tokens';
import { PolicyService } from '../policy/policy.service';

/** The grant principals (`x:u:bob@…`) among what a document event says its readers are. */
export function grantPrincipalsOf(event: DocumentEvent): string[] {
  const principals: string[] =
    event.kind === 'uploaded'
      ? event.attributes.principals
      : event.kind === 'acl_changed'
        ? event.principals
        : event.kind === 'access_snapshot'
          ? event.documents.flatMap((document) => document.principals)
          : [];
  return [...new Set(principals.filter((p) => parseGrantPrincipal(p) !== undefined))];
}

/**
 * `kb.document.v1` → the links behind documents' time-bound grants (docs/adr/0054): a document
 * granting `x:u:bob@T` makes acl-service link `u:bob → x:u:bob@T` until T, so bob's expansion
 * holds that principal until T and not after. Nothing else is read from the event, and nothing
 * is asked of document-service on a search. One group for the service: a link is stored once;
 * the periodic access snapshots bring back any link missed.
 */
@Injectable()
export class DocumentGrantsConsumer {
  readonly consumer: EventConsumer;

  constructor(
    @Inject(KAFKA) kafka: Kafka,
    @Inject(ACL_CONFIG) config: AclConfig,
    policy: PolicyService,
  ) {
    this.consumer = new EventConsumer(kafka, {
      groupId: `${config.KAFKA_GROUP_ID}-document-grants`,
      handlers: {
        [Topics.document]: async (event) => {
          await registerGrants(policy, event.tenantId, grantPrincipalsOf(event.payload));
        },
      },
      log: consumerLog(DocumentGrantsConsumer.name),
    });
  }
}

/**
 * Links each grant's member to it until its end, once, as `system` (audited, versioned and
 * published like any policy change); grants already held or already ended are skipped.
 */
export async function registerGrants(
  policy: Pick<PolicyService, 'holdsGrant' | 'change'>,
  tenantId: string,
  grants: string[],
  now = Date.now(),
): Promise<number> {
  const system: Caller = {
    tenantId: toTenantId(tenantId),
    userId: 'system',
    roles: [],
    groups: [],
    token: '',
  };
  let added = 0;
  for (const grant of grants) {
    const { member, expiresAt } = parseGrantPrincipal(grant)!;
    if (expiresAt.getTime() <= now) continue;
    if (await policy.holdsGrant(tenantId, member, grant)) continue;
    await policy.change(system, {
      kind: 'grant_added',
      member,
      target: grant,
      expiresAt: expiresAt.toISOString(),
    });
    added += 1;
  }
  return added;
}
