import { Type } from 'class-transformer';
import {
  ArrayMaxSize, ArrayNotEmpty, IsArray, IsBoolean, IsIn, IsInt, IsNumber, IsOptional, IsString, Matches, Max, MaxLength, Min, ValidateNested,
} from 'class-validator';
import { type AliasDefinition, CAPABILITIES, ROUTING_STRATEGIES, type RoutingStrategy } from '../../../events/index.js';
import { DefinitionMember, readAliasLimitsMapping } from '../../admin/index.js';
import { type DefinitionNode, DefinitionReader } from '../../../src/kernel/index.js';
import { ALIAS_DEFAULTS } from '../alias/alias.decider.js';

export class AliasRouteDto {
  @IsString() @Matches(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/, { message: 'deployment must be a deployment id' })
  deployment!: string;

  @IsOptional() @IsInt() @Min(0)
  priority?: number;

  @IsOptional() @IsNumber({ allowNaN: false, allowInfinity: false }) @Min(0)
  weight?: number;
}

/** `percent` of sessions try `deployment` (one of the routes) first; changing `salt` reshuffles who. */
export class AliasCanaryDto {
  @IsString()
  deployment!: string;

  @IsNumber({ allowNaN: false, allowInfinity: false, maxDecimalPlaces: 2 }) @Min(0) @Max(100)
  percent!: number;

  @IsOptional() @IsString() @MaxLength(64)
  salt?: string;
}

export class AliasPolicyDto {
  @IsOptional() @IsArray() @IsIn(CAPABILITIES, { each: true })
  requiredCapabilities?: string[];

  @IsOptional() @IsInt() @Min(1)
  maxAttempts?: number | null;

  @IsOptional() @IsInt() @Min(1)
  ttftTimeoutMs?: number | null;

  @IsOptional() @IsArray() @IsString({ each: true })
  regions?: string[];

  @IsOptional() @ValidateNested() @Type(() => AliasCanaryDto)
  canary?: AliasCanaryDto;

  /** false: the exact cache never serves this alias (on by default). */
  @IsOptional() @IsBoolean()
  cache?: boolean;

  /** Per-minute limits and concurrent requests of the alias over every caller: the file's mapping, by the file's reader. */
  @IsOptional() @DefinitionMember(readAliasLimitsMapping)
  limits?: DefinitionNode | null;

  /** The alias that serves what a hard budget refuses. */
  @IsOptional() @IsString() @MaxLength(128)
  budgetDowngrade?: string;
}

/** A new version of an alias; the names match the YAML configuration. */
export class PublishAliasDto {
  @IsOptional() @IsIn(ROUTING_STRATEGIES)
  strategy?: RoutingStrategy;

  @IsArray() @ArrayNotEmpty() @ArrayMaxSize(64) @ValidateNested({ each: true }) @Type(() => AliasRouteDto)
  routes!: AliasRouteDto[];

  @IsOptional() @ValidateNested() @Type(() => AliasPolicyDto)
  policy?: AliasPolicyDto;

  @IsOptional() @IsIn(['public', 'private'])
  visibility?: 'public' | 'private';

  /** A content policy applied to every request on the alias (a live policy's id, as in the file). */
  @IsOptional() @Matches(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/, { message: 'contentPolicy must be a content policy id' })
  contentPolicy?: string | null;
}

export function aliasDefinitionOf(dto: PublishAliasDto): AliasDefinition {
  const canary = dto.policy?.canary;
  const limits = dto.policy?.limits ? readAliasLimitsMapping(new DefinitionReader(), dto.policy.limits, '') : null;
  return {
    strategy: dto.strategy ?? ALIAS_DEFAULTS.strategy,
    routes: dto.routes.map((route) => ({
      deploymentId: route.deployment, priority: route.priority ?? ALIAS_DEFAULTS.routePriority, weight: route.weight ?? ALIAS_DEFAULTS.routeWeight,
    })),
    policy: {
      requiredCapabilities: dto.policy?.requiredCapabilities ?? [],
      maxAttempts: dto.policy?.maxAttempts ?? null,
      ttftTimeoutMs: dto.policy?.ttftTimeoutMs ?? null,
      regions: dto.policy?.regions ?? [],
      // Absent rather than null, as the YAML does, so both describe the same definition.
      ...(canary ? { canary: { deploymentId: canary.deployment, percent: canary.percent, salt: canary.salt ?? '' } } : {}),
      ...(dto.policy?.cache === false ? { cache: false as const } : {}),
      ...(limits ? { limits } : {}),
      ...(dto.policy?.budgetDowngrade ? { budgetDowngrade: dto.policy.budgetDowngrade } : {}),
      ...(dto.contentPolicy ? { contentPolicy: dto.contentPolicy } : {}),
    },
    visibility: dto.visibility ?? ALIAS_DEFAULTS.visibility,
  };
}

/** `?dryRun=true` on a publish: the answer says what would be appended, and nothing is. */
export class AliasDryRunQueryDto {
  @IsOptional() @IsIn(['true', 'false'])
  dryRun?: 'true' | 'false';
}
