import { Topics } from '@kb/contracts';
import { consumerLog, EventConsumer, instanceGroup } from '@kb/kafka';
import { Inject, Injectable } from '@nestjs/common';
import type { Kafka } from 'kafkajs';

import { ACL_CONFIG, type AclConfig } from '../config/acl.config';
import { KAFKA } from '../platform/tokens';
import { PolicyService } from './policy.service';

/**
 * `kb.acl.v1` → reloads the stored policy. A group per instance: every replica reloads the policy
 * another one changed; only changes from now on matter. The event is a prompt, not the guarantee:
 * requests check the tenant's policy version anyway (ADR 18), so a missed or failed reload only
 * delays nothing.
 */
@Injectable()
export class PolicyConsumer {
  readonly consumer: EventConsumer;

  constructor(
    @Inject(KAFKA) kafka: Kafka,
    @Inject(ACL_CONFIG) config: AclConfig,
    policy: PolicyService,
  ) {
    this.consumer = new EventConsumer(kafka, {
      ...instanceGroup(`${config.KAFKA_GROUP_ID}-policy`),
      handlers: { [Topics.acl]: () => policy.reloadAfterChange() },
      fromBeginning: false,
      log: consumerLog(PolicyConsumer.name),
    });
  }
}
